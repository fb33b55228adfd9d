"""Grafana dashboards of a lab's telemetry, built with grafana-foundation-sdk (`twin telemetry dashboards DIR`).

Three dashboards read the Prometheus that `twin telemetry up` runs (twin.telemetry.metrics' catalog):
the fabric overview (BGP sessions and ECMP width per tier, interface rates, errors, discards and flaps
per tier, the switches subscribed), RoCE (per-queue packets, bytes, drops and watermark of each port)
and a drill view (the drilled nodes' links with the drill's instants as annotations). Each has a
Prometheus datasource variable and a `lab` variable read from the label Prometheus adds to every sample.

The SDK's model is Grafana 10.1's, whose AnnotationQuery lacks the fields Grafana's Prometheus
annotations read (`step`, `titleFormat`, `textFormat`, `tagKeys`, `useValueForTime`; the SDK's
main branch has them, unreleased). `PrometheusAnnotation` adds exactly those, so a drill's instants
sit at the instant they happened rather than on the query's step; `model_of` reads a dashboard back
with them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from grafana_foundation_sdk.builders import common as options
from grafana_foundation_sdk.builders import dashboard as builder
from grafana_foundation_sdk.builders import prometheus, stat, statetimeline, table, timeseries
from grafana_foundation_sdk.cog import builder as cogbuilder
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import common
from grafana_foundation_sdk.models import dashboard as model
from grafana_foundation_sdk.models.prometheus import PromQueryFormat

DATASOURCE = model.DataSourceRef(type_val="prometheus", uid="${datasource}")
LAB = 'lab="$lab"'
RATE = "[$__rate_interval]"
TAGS = ["twin", "sonic"]


# -- the Prometheus annotation the SDK's model cannot say ---------------------------------------------

class PrometheusAnnotation(model.AnnotationQuery):
    """An annotation query on a Prometheus datasource, with the fields Grafana's Prometheus
    annotations read besides `expr`."""

    FIELDS = (("step", "step"), ("title_format", "titleFormat"), ("text_format", "textFormat"),
              ("tag_keys", "tagKeys"), ("use_value_for_time", "useValueForTime"))

    def __init__(self, step: str | None = None, title_format: str | None = None, text_format: str | None = None,
                 tag_keys: str | None = None, use_value_for_time: bool | None = None, **base: Any) -> None:
        super().__init__(**base)
        self.step, self.title_format, self.text_format = step, title_format, text_format
        self.tag_keys, self.use_value_for_time = tag_keys, use_value_for_time

    def to_json(self) -> dict[str, object]:
        payload = super().to_json()
        for attr, key in self.FIELDS:
            if (value := getattr(self, attr)) is not None:
                payload[key] = value
        return payload

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PrometheusAnnotation:
        base = model.AnnotationQuery.from_json(data)
        extra = {attr: data[key] for attr, key in cls.FIELDS if key in data}
        return cls(**extra, name=base.name, datasource=base.datasource, enable=base.enable, hide=base.hide,
                   icon_color=base.icon_color, filter_val=base.filter_val, target=base.target,
                   type_val=base.type_val, expr=base.expr)


class Annotation(cogbuilder.Builder[model.AnnotationQuery]):
    def __init__(self, annotation: PrometheusAnnotation) -> None:
        self.annotation = annotation

    def build(self) -> model.AnnotationQuery:
        return self.annotation


def model_of(doc: dict[str, Any]) -> model.Dashboard:
    """A dashboard's JSON read into the SDK's model, its Prometheus annotations with their own fields."""
    board = model.Dashboard.from_json(doc)
    if board.annotations is not None:
        board.annotations.list_val = [PrometheusAnnotation.from_json(a) for a in doc["annotations"]["list"]]
    return board


def annotation_queries(run: str = "") -> list[cogbuilder.Builder[model.AnnotationQuery]]:
    """The drills' instants (inject, detect, converge, restore, ...) where they happened, each drill's
    faults as a region while in place, and traffic runs; `run`: a selector narrowing them to one drill."""
    drill = f'{LAB}, source="drill"{run}'
    return [
        Annotation(PrometheusAnnotation(
            name="drill instants", datasource=DATASOURCE, enable=True, icon_color="red", step="5s",
            expr=f"twin_event_timestamp_seconds{{{drill}}} * 1000", use_value_for_time=True,
            title_format="{{phase}}", text_format="{{name}} on {{target}} ({{run}})", tag_keys="phase,name,target")),
        Annotation(PrometheusAnnotation(
            name="faults in place", datasource=DATASOURCE, enable=True, icon_color="orange", step="5s",
            expr=f"twin_drill_active{{{LAB}{run}}} == 1", title_format="{{name}} on {{target}}",
            text_format="fault in place ({{run}})", tag_keys="name,target")),
        Annotation(PrometheusAnnotation(
            name="traffic runs", datasource=DATASOURCE, enable=True, icon_color="blue", step="5s",
            expr=f'twin_event_timestamp_seconds{{{LAB}, source="traffic"}} * 1000', use_value_for_time=True,
            title_format="traffic {{phase}}", text_format="{{name}} ({{run}})", tag_keys="phase,name")),
    ]


# -- building blocks ------------------------------------------------------------------------------------

def query(expr: str, legend: str, ref: str) -> prometheus.Dataquery:
    return prometheus.Dataquery().expr(expr).legend_format(legend).ref_id(ref).range()


def instant(expr: str, ref: str) -> prometheus.Dataquery:
    return prometheus.Dataquery().expr(expr).ref_id(ref).instant().format(PromQueryFormat.TABLE)


def graph(title: str, unit: str, queries: list[tuple[str, str]], width: int = 12, height: int = 8,
          description: str = "") -> timeseries.Panel:
    panel = (timeseries.Panel().title(title).description(description).datasource(DATASOURCE).unit(unit)
             .span(width).height(height).legend(legend_options()).tooltip(tooltip_options()))
    for number, (expr, legend) in enumerate(queries):
        panel = panel.with_target(query(expr, legend, chr(ord("A") + number)))
    return panel


def per_tier(counter: str) -> str:
    """A counter's rate summed per tier (role)."""
    return f"sum by (role) (rate({counter}{{{LAB}}}{RATE}))"


def legend_options() -> options.VizLegendOptions:
    return (options.VizLegendOptions().display_mode(common.LegendDisplayMode.LIST)
            .placement(common.LegendPlacement.BOTTOM).show_legend(True))


def tooltip_options() -> options.VizTooltipOptions:
    return options.VizTooltipOptions().mode(common.TooltipDisplayMode.MULTI).sort(common.SortOrder.DESCENDING)


def source_variables() -> list[cogbuilder.Builder[model.VariableModel]]:
    """The Prometheus datasource, and the lab: the label Prometheus adds to every sample of a lab."""
    return [
        builder.DatasourceVariable("datasource").label("Prometheus").type("prometheus"),
        label_variable("lab", "twin_telemetry_switch_up", "lab"),
    ]


def label_variable(name: str, selector: str, label: str, multi: bool = False,
                   regex: str = "") -> builder.QueryVariable:
    variable = (builder.QueryVariable(name).label(name).datasource(DATASOURCE)
                .query(f"label_values({selector}, {label})").refresh(model.VariableRefresh.ON_TIME_RANGE_CHANGED)
                .sort(model.VariableSort.ALPHABETICAL_ASC))
    if regex:
        variable = variable.regex(regex)
    if multi:
        variable = variable.multi(True).include_all(True).all_value(".*")
    return variable


def board(uid: str, title: str, description: str) -> builder.Dashboard:
    return (builder.Dashboard(title).uid(uid).description(description).tags(TAGS).refresh("10s")
            .time("now-15m", "now").timezone("browser").tooltip(model.DashboardCursorSync.CROSSHAIR)
            .variables(source_variables()))


def numbered(board_: builder.Dashboard) -> model.Dashboard:
    """The dashboard with every panel numbered (Grafana's links and edits find a panel by its id)."""
    built = board_.build()
    for number, panel in enumerate(built.panels or [], start=1):
        panel.id_val = number
    return built


# -- the dashboards -------------------------------------------------------------------------------------

def fabric() -> model.Dashboard:
    """BGP sessions and ECMP width per tier, interface rates, errors, discards and flaps per tier."""
    d = board("twin-fabric", "twin: fabric overview",
              "A twin lab as a SONiC fabric is watched: BGP, ECMP, interface rates, errors and flaps per tier")
    d = d.annotations(annotation_queries())
    d = d.with_row(builder.Row("Control plane"))
    d = d.with_panel(stat.Panel().title("Switches subscribed").datasource(DATASOURCE).span(4).height(8)
                     .reduce_options(options.ReduceDataOptions().calcs(["lastNotNull"]))
                     .description("switches whose gNMI subscriptions run, of the switches the collector serves")
                     .with_target(query(f"sum(twin_telemetry_switch_up{{{LAB}}})", "subscribed", "A"))
                     .with_target(query(f"count(twin_telemetry_switch_up{{{LAB}}})", "switches", "B")))
    d = d.with_panel(graph("BGP sessions Established per tier", "none", [
        (f"sum by (role) (sonic_bgp_session_established{{{LAB}}})", "{{role}} Established"),
        (f"count by (role) (sonic_bgp_session_established{{{LAB}}})", "{{role}} configured")], width=10))
    d = d.with_panel(graph("ECMP width per tier (next hops of a route)", "none", [
        (f"max by (role) (sonic_route_nexthops{{{LAB}}})", "{{role}} widest"),
        (f"min by (role) (sonic_route_nexthops{{{LAB}}})", "{{role}} narrowest")], width=10,
        description="APPL_DB ROUTE_TABLE's next hops per route: a lost spine narrows the leaves' widest routes"))
    d = d.with_row(builder.Row("Interfaces"))
    d = d.with_panel(graph("Interface rates per tier", "bps", [
        (per_tier("sonic_port_in_octets_total") + " * 8", "{{role}} in"),
        (per_tier("sonic_port_out_octets_total") + " * 8", "{{role}} out")]))
    d = d.with_panel(graph("Busiest ports (sent)", "bps", [
        (f"topk(10, rate(sonic_port_out_octets_total{{{LAB}}}{RATE}) * 8)", "{{switch}} {{port}} → {{peer}}")]))
    d = d.with_panel(graph("Errors and discards per tier", "pps", [
        (per_tier("sonic_port_in_errors_total"), "{{role}} in errors"),
        (per_tier("sonic_port_out_errors_total"), "{{role}} out errors"),
        (per_tier("sonic_port_in_discards_total"), "{{role}} in discards"),
        (per_tier("sonic_port_out_discards_total"), "{{role}} out discards")]))
    d = d.with_panel(graph("Port flaps per tier", "none", [
        (f"sum by (role) (sonic_port_flap_count{{{LAB}}})", "{{role}}")], width=6,
        description="APPL_DB PORT_TABLE flap_count (portsorch's): changes of a port's oper status since its "
                    "switch started, down and up each one"))
    d = d.with_panel(table.Panel().title("Ports down now").datasource(DATASOURCE).span(6).height(8).show_header(True)
                     .description("ports whose STATE_DB netdev_oper_status is down")
                     .with_target(instant(f"sonic_port_oper_status{{{LAB}}} == 0", "A")))
    return numbered(d)


def roce() -> model.Dashboard:
    """Per-queue packets, bytes, drops and watermark of each port (SONiC's COUNTERS_DB queue counters)."""
    sel = f'{LAB}, switch=~"$switch", port=~"$port", queue=~"$queue"'
    d = board("twin-roce", "twin: RoCE queues",
              "Each port's egress queues as SONiC counts them: packets, bytes, drops, watermark per queue")
    d = d.with_variable(label_variable("switch", f"sonic_queue_packets_total{{{LAB}}}", "switch", multi=True))
    d = d.with_variable(label_variable("port", f'sonic_queue_packets_total{{{LAB}, switch=~"$switch"}}', "port",
                                       multi=True))
    d = d.with_variable(label_variable("queue", f"sonic_queue_packets_total{{{LAB}}}", "queue", multi=True))
    d = d.annotations(annotation_queries())
    d = d.with_row(builder.Row("Every selected port, per queue"))
    d = d.with_panel(graph("Packets per queue", "pps", [
        (f"sum by (queue) (rate(sonic_queue_packets_total{{{sel}}}{RATE}))", "queue {{queue}}")],
        description="RoCE belongs in the lossless queue the switch's DSCP_TO_TC_MAP and TC_TO_QUEUE_MAP "
                    "send it to, not in queue 0"))
    d = d.with_panel(graph("Drops per queue", "pps", [
        (f"sum by (queue) (rate(sonic_queue_dropped_packets_total{{{sel}}}{RATE}))", "queue {{queue}}")]))
    d = d.with_row(builder.Row("$switch").repeat("switch"))
    per_port = "by (port, peer, queue)"
    legend = "{{port}} → {{peer}} q{{queue}}"
    d = d.with_panel(graph("$switch: packets per port and queue", "pps", [
        (f"sum {per_port} (rate(sonic_queue_packets_total{{{sel}}}{RATE}))", legend)], width=6))
    d = d.with_panel(graph("$switch: bytes per port and queue", "bps", [
        (f"sum {per_port} (rate(sonic_queue_bytes_total{{{sel}}}{RATE})) * 8", legend)], width=6))
    d = d.with_panel(graph("$switch: drops per port and queue", "pps", [
        (f"sum {per_port} (rate(sonic_queue_dropped_packets_total{{{sel}}}{RATE}))", legend)], width=6))
    d = d.with_panel(graph("$switch: watermark per port and queue", "bytes", [
        (f"max {per_port} (sonic_queue_watermark_bytes{{{sel}}})", legend)], width=6,
        description="SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES: the queue's peak occupancy"))
    return numbered(d)


def drill() -> model.Dashboard:
    """A drill on the timeline: the drilled nodes' links, sessions and ECMP width, its instants as annotations."""
    run = ', run=~"$run"'
    near, far = f'{LAB}, switch=~"$node"', f'{LAB}, peer=~"$node"'
    d = board("twin-drill", "twin: drill",
              "A drill on the timeline: the links of the nodes it touched, with its instants as annotations")
    d = d.with_variable(label_variable("run", f'twin_event_timestamp_seconds{{{LAB}, source="drill"}}', "run")
                        .sort(model.VariableSort.ALPHABETICAL_DESC))
    d = d.with_variable(label_variable("node", f'twin_event_timestamp_seconds{{{LAB}, source="drill"{run}}}',
                                       "target", regex="/^([^:]+)/").multi(True)
                        .description("the nodes the drill's faults target (a link's target names its node)"))
    d = d.annotations(annotation_queries(run))
    d = d.with_panel(graph("Faults in place", "none", [
        (f"twin_drill_active{{{LAB}{run}}}", "{{name}} on {{target}}")], width=24, height=5))
    d = d.with_panel(graph("Received: $node's ports and their far ends", "bps", [
        (f"rate(sonic_port_in_octets_total{{{near}}}{RATE}) * 8", "{{switch}} {{port}} ← {{peer}}"),
        (f"rate(sonic_port_in_octets_total{{{far}}}{RATE}) * 8", "{{switch}} {{port}} ← {{peer}}")]))
    d = d.with_panel(graph("Sent: $node's ports and their far ends", "bps", [
        (f"rate(sonic_port_out_octets_total{{{near}}}{RATE}) * 8", "{{switch}} {{port}} → {{peer}}"),
        (f"rate(sonic_port_out_octets_total{{{far}}}{RATE}) * 8", "{{switch}} {{port}} → {{peer}}")]))
    up_down = model.ValueMap(options={"0": model.ValueMappingResult(text="down", color="red", index=0),
                                      "1": model.ValueMappingResult(text="up", color="green", index=1)})
    d = d.with_panel(statetimeline.Panel().title("Oper status: $node's ports and their far ends")
                     .datasource(DATASOURCE).span(24).height(8).mappings([up_down]).legend(legend_options())
                     .show_value(common.VisibilityMode.NEVER).merge_values(True)
                     .with_target(query(f"sonic_port_oper_status{{{near}}}", "{{switch}} {{port}}", "A"))
                     .with_target(query(f"sonic_port_oper_status{{{far}}}", "{{switch}} {{port}}", "B")))
    d = d.with_panel(graph("BGP sessions Established", "none", [
        (f"sum(sonic_bgp_session_established{{{near}}})", "$node's sessions"),
        (f"sum(sonic_bgp_session_established{{{far}}})", "its neighbours' sessions to it")]))
    d = d.with_panel(graph("Widest ECMP per switch", "none", [
        (f"max by (switch) (sonic_route_nexthops{{{LAB}}})", "{{switch}}")],
        description="a lost spine or link narrows the leaves' widest routes until it is back"))
    d = d.with_panel(table.Panel().title("The drill's instants").datasource(DATASOURCE).span(24).height(8)
                     .show_header(True)
                     .unit("dateTimeAsIso")
                     .with_target(instant(f"twin_event_timestamp_seconds{{{LAB}{run}}} * 1000", "A")))
    return numbered(d)


DASHBOARDS: dict[str, Callable[[], model.Dashboard]] = {
    "twin-fabric.json": fabric,
    "twin-roce.json": roce,
    "twin-drill.json": drill,
}


def text_of(built: model.Dashboard) -> str:
    return json.dumps(built, cls=JSONEncoder, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def render() -> dict[str, str]:
    """Each dashboard's file name and its JSON, as Grafana imports it."""
    return {name: text_of(make()) for name, make in DASHBOARDS.items()}
