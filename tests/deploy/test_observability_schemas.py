"""Alert rules, scrape config and dashboard against their published JSON schemas (schemas/).

Prometheus rule and config files: SchemaStore's prometheus.rules.json and prometheus.json. The
Grafana dashboard: Grafana's dashboard kind as JSON schema (grafana-foundation-sdk), its Prometheus
query kind for every target and the timeseries panel kind for every panel's options. The
prometheus-adapter values have no published schema: they are checked against the chart's own
values.yaml and the adapter's rule fields instead (test_adapter_values_*).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.deploy.conftest import DATA, DEPLOY, SCHEMAS, load_docs, schema_errors

RULES_SCHEMA = "prometheus.rules.json"
CONFIG_SCHEMA = "prometheus.json"
DASHBOARD_SCHEMA = "grafana-dashboard.jsonschema.json"
QUERY_SCHEMA = "grafana-prometheus.jsonschema.json"
Doc = dict[str, Any]
Breaker = Callable[[Doc], None]
PANEL_SCHEMAS = {"timeseries": "grafana-timeseries.jsonschema.json"}
"""Panel plugin type -> its vendored schema (Options, FieldConfig); a new panel type needs one."""


def _rules() -> Doc:
    (doc,) = load_docs(DEPLOY / "prometheus" / "r42-alerts.yaml")
    return doc


def _scrape() -> Doc:
    (doc,) = load_docs(DEPLOY / "prometheus" / "scrape-config.yaml")
    return doc


def _dashboard() -> Doc:
    dash: Doc = json.loads((DEPLOY / "grafana" / "r42-overview.json").read_text())
    return dash


def test_every_vendored_schema_is_named_in_the_readme() -> None:
    readme = (SCHEMAS / "README.md").read_text()
    for path in SCHEMAS.glob("*.json"):
        assert f"`{path.name}`" in readme, f"{path.name}: say where it comes from"


def test_alert_rules_pass_the_rules_schema() -> None:
    assert schema_errors(RULES_SCHEMA, _rules()) == []


def _drop_expr(rule: Doc) -> None:
    del rule["expr"]


def _bad_for(rule: Doc) -> None:
    rule["for"] = "ten minutes"


def _typo_key(rule: Doc) -> None:
    rule["annotation"] = rule.pop("annotations")


def _bad_label_name(rule: Doc) -> None:
    rule["labels"]["team-name"] = "ops"


@pytest.mark.parametrize(
    ("break_it", "reason"),
    [(_drop_expr, "'expr' is a required property"), (_bad_for, "for: 'ten minutes' does not match"),
     (_typo_key, "'annotation' was unexpected"), (_bad_label_name, "'team-name' does not match")],
)  # fmt: skip
def test_the_rules_schema_rejects_a_broken_rule(break_it: Breaker, reason: str) -> None:
    doc = copy.deepcopy(_rules())
    break_it(doc["groups"][0]["rules"][0])
    (error,) = schema_errors(RULES_SCHEMA, doc)
    assert reason in error


def test_a_group_without_a_name_is_rejected() -> None:
    doc = copy.deepcopy(_rules())
    del doc["groups"][0]["name"]
    assert schema_errors(RULES_SCHEMA, doc) == ["groups/0: 'name' is a required property"]


def test_scrape_config_passes_the_prometheus_config_schema() -> None:
    assert schema_errors(CONFIG_SCHEMA, _scrape()) == []


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("scrape_interval", "15 seconds", "'15 seconds' does not match"),
        ("relabel_config", [], "'relabel_config' was unexpected"),
        ("scheme", "ftp", "'ftp' is not one of"),
    ],
)
def test_the_config_schema_rejects_a_broken_scrape_job(field: str, value: Any, reason: str) -> None:
    doc = copy.deepcopy(_scrape())
    doc["scrape_configs"][0][field] = value
    (error,) = schema_errors(CONFIG_SCHEMA, doc)
    assert reason in error


def test_the_config_schema_rejects_an_unknown_relabel_action() -> None:
    doc = copy.deepcopy(_scrape())
    doc["scrape_configs"][0]["relabel_configs"][0]["action"] = "kep"
    (error,) = schema_errors(CONFIG_SCHEMA, doc)
    assert error.startswith("scrape_configs/0/relabel_configs/0/action: 'kep' is not one of")


def _dashboard_errors(dash: Doc) -> list[str]:
    errors = schema_errors(DASHBOARD_SCHEMA, dash)
    for panel in dash["panels"]:
        where = f"panel {panel.get('id')}"
        for target in panel.get("targets", []):
            errors += [f"{where} {e}" for e in schema_errors(QUERY_SCHEMA, target)]
        schema = PANEL_SCHEMAS.get(panel["type"])
        if schema is None:
            errors.append(f"{where}: no schema vendored for panel type {panel['type']!r}")
            continue
        errors += [f"{where} {e}" for e in schema_errors(schema, panel["options"], "Options")]
        custom = panel.get("fieldConfig", {}).get("defaults", {}).get("custom", {})
        errors += [f"{where} {e}" for e in schema_errors(schema, custom, "FieldConfig")]
    return errors


def test_dashboard_passes_grafanas_dashboard_query_and_panel_schemas() -> None:
    assert _dashboard_errors(_dashboard()) == []


def _no_expr(dash: Doc) -> None:
    del dash["panels"][0]["targets"][0]["expr"]


def _bad_legend_mode(dash: Doc) -> None:
    dash["panels"][0]["options"]["legend"]["displayMode"] = "tabel"


def _typo_grid(dash: Doc) -> None:
    dash["panels"][0]["gridpos"] = dash["panels"][0].pop("gridPos")


def _bad_variable_type(dash: Doc) -> None:
    dash["templating"]["list"][0]["type"] = "datasourse"


def _no_schema_version(dash: Doc) -> None:
    del dash["schemaVersion"]


def _unknown_panel_type(dash: Doc) -> None:
    dash["panels"][0]["type"] = "graph"


@pytest.mark.parametrize(
    ("break_it", "reason"),
    [
        (_no_expr, "panel 1 (root): 'expr' is a required"),
        (_bad_legend_mode, "'tabel' is not one of"),
        (_typo_grid, "'gridpos' was unexpected"),
        (_bad_variable_type, "'datasourse' is not one of"),
        (_no_schema_version, "'schemaVersion' is a required"),
        (_unknown_panel_type, "panel type 'graph'"),
    ],
)
def test_the_dashboard_schemas_reject_a_broken_dashboard(break_it: Breaker, reason: str) -> None:
    dash = _dashboard()
    break_it(dash)
    (error,) = _dashboard_errors(dash)
    assert reason in error


ADAPTER_CHART_VALUES = DATA / "prometheus-adapter-chart-values-5.3.0.yaml"
"""The chart's own values.yaml (prometheus-community/helm-charts, prometheus-adapter 5.3.0)."""
DISCOVERY_RULE = {"seriesQuery", "seriesFilters", "resources", "name", "metricsQuery"}
"""DiscoveryRule's fields in the adapter's pkg/config/config.go (it publishes no schema)."""
RESOURCES = {"template", "overrides", "namespaced"}
NAME_MAPPING = {"matches", "as"}


def _adapter() -> Doc:
    (doc,) = load_docs(DEPLOY / "prometheus" / "adapter-values.yaml")
    return doc


def _adapter_problems(values: Doc) -> list[str]:
    (chart,) = load_docs(ADAPTER_CHART_VALUES)
    problems = [f"{k}: not a chart value" for k in values if k not in chart]
    for key in ("prometheus", "rules"):
        problems += [f"{key}.{k}: not a chart value" for k in values.get(key, {})
                     if k not in chart[key]]  # fmt: skip
    for i, rule in enumerate(values.get("rules", {}).get("external", [])):
        problems += [f"external[{i}].{k}: unknown" for k in set(rule) - DISCOVERY_RULE]
        problems += [f"external[{i}]: needs {k}" for k in ("seriesQuery", "metricsQuery")
                     if not isinstance(rule.get(k), str)]  # fmt: skip
        resources, name = rule.get("resources", {}), rule.get("name", {})
        problems += [f"external[{i}].resources.{k}: unknown" for k in resources.keys() - RESOURCES]
        problems += [f"external[{i}].name.{k}: unknown" for k in name.keys() - NAME_MAPPING]
        for label, target in resources.get("overrides", {}).items():
            if set(target) - {"group", "resource"} or not target.get("resource"):
                problems.append(f"external[{i}].resources.overrides.{label}: needs resource")
    return problems


def test_adapter_values_use_only_chart_values_and_rule_fields() -> None:
    assert _adapter_problems(_adapter()) == []


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        (("prometheus", "uri"), "prometheus.uri: not a chart value"),
        (("rules", "externals"), "rules.externals: not a chart value"),
        (("rules", "external", 0, "seriesquery"), "external[0].seriesquery: unknown"),
        (("rules", "external", 0, "name", "match"), "external[0].name.match: unknown"),
        (("rules", "external", 0, "resources", "tmpl"), "external[0].resources.tmpl: unknown"),
    ],
)
def test_the_adapter_check_rejects_a_typo(path: tuple[Any, ...], reason: str) -> None:
    values = copy.deepcopy(_adapter())
    node: Any = values
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = "x"
    assert _adapter_problems(values) == [reason]
