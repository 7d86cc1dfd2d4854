"""Prometheus rules, scrape/adapter config and the Grafana dashboard: what their schemas can't say.

The schemas (test_observability_schemas.py) check fields and types; these check unique names,
severities, non-overlapping panels, defined variables and that every metric used is one we export.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.deploy.conftest import (
    DEPLOY,
    exported_metric_names,
    load_docs,
    parse_promql,
    referenced_metrics,
)

DURATION = re.compile(r"^([0-9]+(ms|s|m|h|d|w|y))+$")
ALERT_NAME = re.compile(r"^[A-Z][A-Za-z0-9]+$")


def _rules() -> list[dict[str, Any]]:
    (doc,) = load_docs(DEPLOY / "prometheus" / "r42-alerts.yaml")
    assert set(doc) == {"groups"}
    groups = doc["groups"]
    assert len({g["name"] for g in groups}) == len(groups), "group names must be unique"
    rules = []
    for group in groups:
        assert set(group) <= {"name", "interval", "rules", "limit"}
        assert group["rules"], group["name"]
        rules.extend(group["rules"])
    return rules


def test_alert_rules_have_the_fields_promtool_requires() -> None:
    rules = _rules()
    names = [r["alert"] for r in rules]
    assert len(set(names)) == len(names)
    for rule in rules:
        assert set(rule) <= {"alert", "expr", "for", "keep_firing_for", "labels", "annotations"}
        assert ALERT_NAME.fullmatch(rule["alert"]), rule["alert"]
        assert DURATION.fullmatch(rule["for"]), rule
        assert rule["labels"]["severity"] in {"info", "warning", "critical"}
        assert rule["annotations"]["summary"] and rule["annotations"]["description"]
        parse_promql(rule["expr"])
        for text in rule["annotations"].values():  # Go templates close
            assert text.count("{{") == text.count("}}"), text


def test_alerts_cover_what_ops_asked_for() -> None:
    exprs = " ".join(r["expr"] for r in _rules())
    for needle in ("r42_consumer_pending_messages", "failed\\\\..+", 'status="429"',
                   "increase(r42_llm_cost_usd_total[24h])"):  # fmt: skip
        assert needle in exprs, needle


def _dashboard_exprs() -> list[str]:
    dash = json.loads((DEPLOY / "grafana" / "r42-overview.json").read_text())
    return [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]


def test_every_expression_uses_metrics_we_export() -> None:
    exported = exported_metric_names()
    exprs = [r["expr"] for r in _rules()] + _dashboard_exprs()
    (adapter,) = load_docs(DEPLOY / "prometheus" / "adapter-values.yaml")
    exprs += [rule["seriesQuery"] for rule in adapter["rules"]["external"]]
    for expr in exprs:
        used = referenced_metrics(expr)
        assert used, f"no metric in {expr!r}"
        assert used <= exported, f"{sorted(used - exported)} are not exported ({expr!r})"


def test_metric_names_come_from_the_parsed_selectors() -> None:
    expr = 'max_over_time(rate(r42_a_total[5m])[1h:]) / on () {__name__="up"} > r42_b{x="r42_c"}'
    assert referenced_metrics(expr) == {"r42_a_total", "up", "r42_b"}
    assert referenced_metrics('{__name__=~"r42_.+"}') == set()  # a pattern names no metric


def test_the_name_check_catches_an_unknown_metric() -> None:
    with pytest.raises(AssertionError):
        assert referenced_metrics("rate(r42_llm_calls_totl[5m])") <= exported_metric_names()


def test_dashboard_structure() -> None:
    dash = json.loads((DEPLOY / "grafana" / "r42-overview.json").read_text())
    assert dash["uid"] and dash["title"] and isinstance(dash["schemaVersion"], int)
    variables = {v["name"]: v for v in dash["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    ids = [p["id"] for p in dash["panels"]]
    assert len(set(ids)) == len(ids)
    taken: set[tuple[int, int]] = set()
    for panel in dash["panels"]:
        grid = panel["gridPos"]
        assert grid["x"] >= 0 and grid["w"] > 0 and grid["x"] + grid["w"] <= 24, panel["title"]
        cells = {(x, y) for x in range(grid["x"], grid["x"] + grid["w"])
                 for y in range(grid["y"], grid["y"] + grid["h"])}  # fmt: skip
        assert not cells & taken, f"{panel['title']} overlaps another panel"
        taken |= cells
        assert panel["datasource"]["uid"] == "${datasource}"
        refs = [t["refId"] for t in panel["targets"]]
        assert refs and len(set(refs)) == len(refs)
        for target in panel["targets"]:
            parse_promql(target["expr"])
            for var in re.findall(r"\$(\w+)", target["expr"]):
                assert var in variables or var.startswith("__"), f"undefined ${var}"


def test_scrape_config_labels_what_rules_and_adapter_use() -> None:
    (doc,) = load_docs(DEPLOY / "prometheus" / "scrape-config.yaml")
    (job,) = doc["scrape_configs"]
    targets = {r.get("target_label") for r in job["relabel_configs"]}
    assert {"pod", "namespace", "service", "__address__"} <= targets
    assert job["kubernetes_sd_configs"][0]["role"] == "pod"


@pytest.mark.parametrize(
    "expr",
    ["rate(r42_llm_calls_total[5m)", "sum by (le (r42_llm_calls_total)", 'up{job="r42}',
     "rate(r42_llm_calls_total[5 minutes])", "r42_llm_calls_total >", "rate(r42_llm_calls_total)"],
)  # fmt: skip
def test_the_parser_rejects_broken_promql(expr: str) -> None:
    with pytest.raises(AssertionError, match="not PromQL"):
        parse_promql(expr)


def test_adapter_metrics_query_is_promql_once_templated() -> None:
    (adapter,) = load_docs(DEPLOY / "prometheus" / "adapter-values.yaml")
    for rule in adapter["rules"]["external"]:
        series = rule["name"]["as"]
        fields = {"Series": series, "LabelMatchers": 'namespace="r42"', "GroupBy": "consumer"}
        expr = rule["metricsQuery"]
        for field, value in fields.items():
            expr = expr.replace(f"<<.{field}>>", value)
        assert "<<" not in expr, f"unknown adapter template field in {rule['metricsQuery']!r}"
        assert referenced_metrics(expr) == {series}
