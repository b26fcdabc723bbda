"""Files a SpecStory export names map onto the repo the export lies in, wherever it was recorded."""

from __future__ import annotations

from pathlib import Path

import pytest
from specstory_fixtures import CURSOR_TOOL_LINES_2025

from habitus.capture import read_trace_file
from habitus.capture.specstory_paths import clean_path, map_path, recorded_root


@pytest.mark.parametrize(("raw", "clean"), [
    ("src/app.ts", "src/app.ts"),
    ("`./src/app.ts`", "./src/app.ts"),
    ("c:\\Users\\ann\\shop\\src\\app.ts", "c:/Users/ann/shop/src/app.ts"),
    ("C:/Users/ann/shop/app.ts", "c:/Users/ann/shop/app.ts"),
    ("/d:/projects/shop/config.ts", "d:/projects/shop/config.ts"),
    ("src\\pages\\Cart.tsx", "src/pages/Cart.tsx"),
    ("undefined", None),
    ("  ", None),
])
def test_a_named_path_is_cleaned_to_one_spelling(raw: str, clean: str | None) -> None:
    assert clean_path(raw) == clean


@pytest.mark.parametrize(("path", "root", "mapped"), [
    ("/home/ann/shop/src/app.ts", "/home/ann/shop", "src/app.ts"),
    ("/home/ann/other/app.ts", "/home/ann/shop", "/home/ann/other/app.ts"),  # outside: kept as recorded
    ("c:/users/ann/shop/src/app.ts", "c:/Users/Ann/Shop", "src/app.ts"),  # Windows folds case
    ("/home/ann/shop/.git/config", "/home/ann/shop", "/home/ann/shop/.git/config"),  # never inside .git
    ("./src//app.ts", None, "src/app.ts"),
    ("../elsewhere.ts", "/home/ann/shop", "../elsewhere.ts"),
])
def test_a_path_under_the_recorded_root_becomes_repo_relative(path: str, root: str | None, mapped: str) -> None:
    assert map_path(path, root) == mapped


def test_the_recorded_root_is_where_the_named_files_exist_here(tmp_path: Path) -> None:
    local = tmp_path / "shop"  # the clone has another name than the recording machine's checkout
    (local / "src" / "shop").mkdir(parents=True)
    (local / "src" / "shop" / "cart.py").write_text("x = 1\n")
    (local / "README.md").write_text("# shop\n")
    named = ["/Users/ann/work/shop-main/src/shop/cart.py", "/Users/ann/work/shop-main/README.md",
             "/Users/ann/work/shop-main/new_file.py"]
    assert recorded_root(named, [], str(local)) == "/Users/ann/work/shop-main"
    nested = ["/home/dev/shop/src/shop/cart.py"]  # `shop` twice: the folder under which cart.py exists here
    assert recorded_root(nested, [], str(local)) == "/home/dev/shop"
    assert recorded_root(nested, [], str(tmp_path / "absent" / "shop")) == "/home/dev/shop"  # shallowest `shop`
    cd = ["/srv/build/app"]
    assert recorded_root(["/srv/build/app/main.go"], cd, str(tmp_path / "absent" / "other")) == "/srv/build/app"
    assert recorded_root(["/srv/build/app/main.go"], [], str(tmp_path / "absent" / "other")) is None
    assert recorded_root([], cd, str(local)) is None


def test_an_export_of_a_checkout_named_otherwise_maps_by_the_files_here(tmp_path: Path) -> None:
    local = tmp_path / "storefront"
    (local / "src" / "checkout").mkdir(parents=True)
    (local / "src" / "checkout" / "total.ts").write_text("export {}\n")
    path = local / ".specstory" / "history" / "2025-10-26_19-51Z-weighted-cart-totals.md"
    path.parent.mkdir(parents=True)
    path.write_text(CURSOR_TOOL_LINES_2025)
    trace = read_trace_file(path).traces[0]
    assert trace.meta["recorded_root"] == "c:/Users/dev/shop"
    assert [c.input.get("path") for c in trace.tool_calls if "path" in c.input] == [
        "src/checkout/total.ts", "src/checkout/total.ts", "src/checkout/weight.ts", "src"]
