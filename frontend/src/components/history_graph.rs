//! A history graph drawn as SVG from Rust (no chart library in the
//! bundle): the lines of `graph::paths` over a value axis and a time axis
//! in the browser's local time, and beside it a visually hidden sentence
//! per line ("Players over the last 24 hours: peak 3 at 14:00, average
//! 1.2.") for screen readers, which skip the drawing.

use std::rc::Rc;

use yew::prelude::*;

use crate::{
    graph::{self, tenths, Frame},
    history::{figures, one_decimal, Series, Span},
    i18n::{t, tf, K},
    services::browser::{local_time, utc_offset_ms, TimeStyle},
};

/// One line of a graph.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphLine {
    pub series: Rc<Series>,
    /// Its CSS class (colour): `players`, `servers`.
    pub class: &'static str,
    /// What it counts, for the text alternative ("Players").
    pub what: &'static str,
}

/// Props of [`HistoryGraph`].
#[derive(Properties, PartialEq)]
pub struct HistoryGraphProps {
    /// The first line also gets the area under it.
    pub lines: Vec<GraphLine>,
    /// The interval of one point.
    pub step_ms: f64,
    pub span: Span,
    /// Where the time axis ends (the answer's time).
    pub to_ms: f64,
    /// The value axis reaches at least this far (a server's slots).
    #[prop_or_default]
    pub floor: f64,
    /// Height in user units (the width is 600, scaled to fit).
    #[prop_or(170.0)]
    pub height: f64,
    pub testid: AttrValue,
}

const W: f64 = 600.0;
const LEFT: f64 = 34.0;
const RIGHT: f64 = 10.0;
const TOP: f64 = 8.0;
const BOTTOM: f64 = 22.0;

/// The graph of `lines` over `span`; its `data-points` says how many
/// points the first line draws.
#[component]
pub fn HistoryGraph(props: &HistoryGraphProps) -> Html {
    let to_ms = props.to_ms;
    let from_ms = to_ms - props.span.span_ms();
    let peak = props
        .lines
        .iter()
        .flat_map(|l| l.series.iter().filter_map(|p| p.1))
        .fold(0.0, f64::max);
    let frame = Frame {
        w: W - LEFT - RIGHT,
        h: props.height - TOP - BOTTOM,
        from_ms,
        to_ms,
        scale: graph::scale(peak, props.floor),
    };
    let drawn: Vec<_> = props
        .lines
        .iter()
        .map(|l| graph::paths(&l.series, props.step_ms, &frame))
        .collect();
    let points = drawn.first().map_or(0, |p| p.points);
    let times = props.span.shows_times();
    let value_axis = frame.scale.ticks().into_iter().map(|v| {
        let y = frame.y(v);
        html! {
            <>
                <line class="grid" x1="0" x2={tenths(frame.w)} y1={tenths(y)} y2={tenths(y)} />
                <text class="tick" x="-6" y={tenths(y + 4.0)} text-anchor="end">{ one_decimal(v) }</text>
            </>
        }
    });
    let offset = utc_offset_ms(to_ms);
    let time_axis = graph::time_ticks(from_ms, to_ms, props.span.tick_ms(), offset)
        .into_iter()
        .map(|at| {
            let x = frame.x(at);
            let label = local_time(at, if times { TimeStyle::Time } else { TimeStyle::Date });
            html! {
                <>
                    <line class="grid" x1={tenths(x)} x2={tenths(x)} y1="0" y2={tenths(frame.h)} />
                    <text class="tick" x={tenths(x)} y={tenths(frame.h + 16.0)} text-anchor="middle">{ label }</text>
                </>
            }
        });
    let shapes = props
        .lines
        .iter()
        .zip(&drawn)
        .enumerate()
        .map(|(i, (l, p))| {
            html! {
                <>
                    if i == 0 {
                        <path class={classes!("area", l.class)} d={p.area.clone()} />
                    }
                    <path class={classes!("line", l.class)} d={p.line.clone()} />
                </>
            }
        });
    let phrase = t(props.span.phrase());
    let summary = props
        .lines
        .iter()
        .map(|l| match figures(&l.series) {
            Some(f) => {
                let at = local_time(
                    f.peak.1,
                    if times {
                        TimeStyle::Time
                    } else {
                        TimeStyle::DateTime
                    },
                );
                tf(
                    K::GraphSummary,
                    &[
                        &l.what,
                        &phrase,
                        &one_decimal(f.peak.0),
                        &at,
                        &one_decimal(f.average),
                    ],
                )
            }
            None => tf(K::GraphEmpty, &[&l.what, &phrase]),
        })
        .collect::<Vec<_>>()
        .join(" ");
    let view_box = format!("0 0 {} {}", tenths(W), tenths(props.height));
    html! {
        <figure class="graph" data-testid={props.testid.clone()} data-points={points.to_string()}
            data-span={props.span.as_str()}>
            <svg viewBox={view_box} aria-hidden="true" focusable="false">
                <g transform={format!("translate({},{})", tenths(LEFT), tenths(TOP))}>
                    { for value_axis }
                    { for time_axis }
                    { for shapes }
                </g>
            </svg>
            if points == 0 {
                <p class="graph-empty muted" aria-hidden="true">{ t(K::NoHistoryYet) }</p>
            }
            <figcaption class="visually-hidden" data-testid="graph-summary">{ summary }</figcaption>
        </figure>
    }
}
