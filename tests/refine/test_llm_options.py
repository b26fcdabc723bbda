"""The optional LLM summarizer and judge, wired to a real provider client talking to a local stub server."""

from __future__ import annotations

import pytest

from habitus.llm.providers import Budget, get_provider
from habitus.refine.gate import LLMJudge
from habitus.refine.pipeline import refine
from habitus.refine.samples import write_corpus
from habitus.refine.summarize import LLMSummarizer

from .stub_llm import SUMMARY, stub_chat_server


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return write_corpus(tmp_path_factory.mktemp("llm-sample"), n_traces=16)


def provider(url: str):
    return get_provider("openai", model="gpt-4o", base_url=url + "/v1", api_key="sk-stub", budget=Budget(),
                        max_retries=0, backoff=0.01, cache=False)


def run(sample, url: str, **kwargs):
    llm = provider(url)
    return refine(sample["skill"], sample["traces"], sample["rewards"], clusterer="single",
                  summarizer=LLMSummarizer(llm), judge=LLMJudge(llm), provider=llm, **kwargs)


def test_llm_summaries_and_judge_are_used_and_usage_is_counted(sample):
    with stub_chat_server() as stub:
        result = run(sample, stub["url"])
    manifest = result.manifest
    judged = [p for p in result.proposals if p["gate"]["judge"] is not None]
    assert manifest["config"]["summarizer"] == "llm"
    assert all(s["summary"] == SUMMARY for s in manifest["summaries"])
    assert judged and all(p["gate"]["judge"]["passed"] for p in judged)
    assert manifest["usage"]["calls"] == 16 + len(judged) == len(stub["prompts"])
    assert manifest["usage"]["total_tokens"] == 120 * manifest["usage"]["calls"]
    assert any("FAILED" in p for p in stub["prompts"]) and any("SUCCEEDED" in p for p in stub["prompts"])


@pytest.mark.parametrize(("fail_open", "passed"), [(False, False), (True, True)])
def test_judge_error_is_fail_closed_unless_fail_open(sample, fail_open, passed):
    with stub_chat_server(judge_answer=None) as stub:
        result = run(sample, stub["url"], gate_fail_open=fail_open)
    judged = [p for p in result.proposals if p["gate"]["judge"] is not None]
    assert judged
    assert all(p["gate"]["passed"] is passed for p in judged)
    assert all(p["gate"]["judge"]["passed"] is None for p in judged)


def test_judge_reply_without_a_verdict_counts_as_an_error(sample):
    with stub_chat_server(judge_answer="Perhaps.") as stub:
        result = run(sample, stub["url"])
    judged = [p for p in result.proposals if p["gate"]["judge"] is not None]
    assert judged and not any(p["gate"]["passed"] for p in judged)
    assert "does not start with YES or NO" in judged[0]["gate"]["judge"]["reason"]


def test_summary_errors_fall_back_to_the_model_free_summary(sample):
    with stub_chat_server(judge_answer="YES, shown.", fail_summaries=True) as stub:
        result = run(sample, stub["url"])
    manifest = result.manifest
    assert manifest["config"]["summarizer_errors"] == 16
    assert all(s["summary"].startswith(("Succeeded", "Failed")) for s in manifest["summaries"])
    assert result.accepted  # the run still completes
