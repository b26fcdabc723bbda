"""Merging: frontmatter byte for byte, scoping endorsed instructions in place, additions in their own section."""

from __future__ import annotations

from habitus.refine.behaviours import catalogue
from habitus.refine.merge import GUARDRAIL_HEADING, REINFORCE_HEADING, merge, split_frontmatter, unified_diff

from .helpers import proposal

FRONT = '---\nname: xlsx\ndescription: "Edit   spreadsheets"   \nextra:  [a,  b]\n---\n'
BODY = """
# Skill

1. **Inspect.** Print the sheet names.
2. **Compute.** Use pandas for table-wide computation and write the
   result back with `to_excel`.
3. **Save.** Save to the output path.

## Notes

- Keep formatting.
"""
SKILL = FRONT + BODY
REGISTRY = catalogue()


def test_split_frontmatter_is_exact():
    assert split_frontmatter(SKILL) == (FRONT, BODY)
    assert split_frontmatter("# no header\n") == ("", "# no header\n")
    assert split_frontmatter("---\nunterminated: yes\n") == ("", "---\nunterminated: yes\n")


def test_conflicting_instruction_is_scoped_where_it_is_written_not_deleted():
    edit = proposal("pandas", 3, text="Do not rewrite the workbook through pandas.")
    merged, log = merge(SKILL, [edit], REGISTRY)
    assert merged.startswith(FRONT)
    assert log[0]["action"] == "scoped"
    assert "Use pandas for table-wide computation and write the" in merged  # still there
    scoped = merged.split("\n")[merged.split("\n").index("   result back with `to_excel` — except for tasks about "
                                                         "ledgers: do not rewrite the workbook through pandas.")]
    assert scoped.endswith("pandas.")
    assert GUARDRAIL_HEADING not in merged  # no distant caveat
    untouched = [line for line in SKILL.split("\n") if "to_excel" not in line]
    assert all(line in merged.split("\n") for line in untouched)


def test_unrelated_guardrail_is_added_in_its_own_section_and_reinforcement_in_another():
    guard = proposal("sed-paging", 2, text="Do not page with sed.")
    keep = proposal("openpyxl-save", 2, kind="reinforce", text="Save with wb.save.")
    merged, log = merge(SKILL, [guard, keep], REGISTRY)
    assert [entry["action"] for entry in log] == ["added", "added"]
    assert merged.startswith(SKILL.rstrip("\n"))  # everything before is unchanged
    assert f"{GUARDRAIL_HEADING}\n\n- Do not page with sed." in merged
    assert f"{REINFORCE_HEADING}\n\n- Save with wb.save." in merged


def test_second_merge_appends_under_the_existing_heading():
    first, _ = merge(SKILL, [proposal("sed-paging", 2, text="Do not page with sed.")], REGISTRY)
    second, _ = merge(first, [proposal("rounding", 2, text="Do not round.")], REGISTRY)
    assert second.count(GUARDRAIL_HEADING) == 1
    assert second.endswith("- Do not page with sed.\n- Do not round.\n")


def test_removal_only_of_the_targeted_line_on_direct_contradiction():
    edit = proposal("sed-paging", 2)
    edit.op, edit.target = "remove", "- Keep formatting."
    merged, log = merge(SKILL, [edit], REGISTRY)
    assert log[0]["action"] == "removed"
    assert "- Keep formatting." not in merged
    assert merged.replace("\n", "") == SKILL.replace("- Keep formatting.", "").replace("\n", "")


def test_duplicate_behaviours_and_present_text_are_not_merged_twice():
    a = proposal("sed-paging", 2, text="Do not page with sed.")
    b = proposal("sed-paging", 3, text="Do not page with sed.")
    b.id = "F1"
    merged, log = merge(SKILL, [a, b], REGISTRY)
    assert [entry["action"] for entry in log] == ["added", "same-as"]
    again, log2 = merge(merged, [a], REGISTRY)
    assert again == merged and log2[0]["action"] == "present"


def test_negated_instruction_is_not_treated_as_an_endorsement():
    skill = FRONT + "\n- Never use pandas here.\n"
    merged, log = merge(skill, [proposal("pandas", 2, text="Do not use pandas.")], REGISTRY)
    assert log[0]["action"] == "added"
    assert "- Never use pandas here.\n" in merged


def test_unified_diff_names_the_file():
    diff = unified_diff("a\n", "a\nb\n", "SKILL.md")
    assert diff.startswith("--- a/SKILL.md\n+++ b/SKILL.md\n") and "+b\n" in diff


def test_crlf_frontmatter_is_kept_byte_for_byte():
    front = "---\r\nname: x\r\ndescription: y\r\n---\r\n"
    skill = front + "# Skill\r\n\r\n- Use pandas for everything.\r\n"
    merged, log = merge(skill, [proposal("pandas", 2, text="Do not use pandas for the output.")], REGISTRY)
    assert merged.startswith(front)
    assert log[0]["action"] == "scoped"
