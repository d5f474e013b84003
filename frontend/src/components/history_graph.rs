//! A history graph drawn as SVG from Rust (no chart library in the
//! bundle): the lines of `graph::paths` over a value axis and a time axis
//! in the browser's local time, and beside it a visually hidden sentence
//! per line ("Players over the last 24 hours: peak 3 at 14:00, average
//! 1.2.") for screen readers, which skip the drawing.

use std::rc::Rc;

use protocol::api::HistoryRange;
use yew::prelude::*;

use crate::{
    graph::{self, tenths, Frame},
    history::{figures, one_decimal, RangeLabels, Series},
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
    pub span: HistoryRange,
    /// Where the time axis ends (the answer's time).
    pub to_ms: f64,
    /// The value axis reaches at least this far (a server's slots).
    #[prop_or_default]
    pub floor: f64,
    /// A small graph (the lobby's totals under the list).
    #[prop_or_default]
    pub small: bool,
    pub testid: AttrValue,
}

/// The plot's user units: the SVG stretches them to the box CSS gives it
/// (`preserveAspectRatio="none"`, strokes kept at their width), so the
/// axis labels, which are HTML over it, keep their size at any width.
const W: f64 = 1000.0;
const H: f64 = 100.0;

/// `v` of `of` as a CSS percentage.
fn pct(v: f64, of: f64) -> String {
    format!("{}%", tenths(v / of * 100.0))
}

/// The sentence that says what `line` shows over `span`.
fn summary(line: &GraphLine, span: HistoryRange) -> String {
    let phrase = t(span.phrase());
    let Some(f) = figures(&line.series) else {
        return tf(K::GraphEmpty, &[&line.what, &phrase]);
    };
    let style = if span.shows_times() {
        TimeStyle::Time
    } else {
        TimeStyle::DateTime
    };
    tf(
        K::GraphSummary,
        &[
            &line.what,
            &phrase,
            &one_decimal(f.peak.0),
            &local_time(f.peak.1, style),
            &one_decimal(f.average),
        ],
    )
}

/// The graph of `lines` over `span`; its `data-points` says how many
/// points the first line draws.
#[component]
pub fn HistoryGraph(props: &HistoryGraphProps) -> Html {
    let to_ms = props.to_ms;
    let from_ms = to_ms - props.span.span_ms() as f64;
    let peak = props
        .lines
        .iter()
        .flat_map(|l| l.series.iter().filter_map(|p| p.1))
        .fold(0.0, f64::max);
    let frame = Frame {
        w: W,
        h: H,
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
    let values = frame.scale.ticks();
    let times = graph::time_ticks(from_ms, to_ms, props.span.tick_ms(), utc_offset_ms(to_ms));
    let grid = values
        .iter()
        .map(|&v| {
            let y = tenths(frame.y(v));
            html! { <line class="grid" x1="0" x2={tenths(W)} y1={y.clone()} y2={y} /> }
        })
        .chain(times.iter().map(|&at| {
            let x = tenths(frame.x(at));
            html! { <line class="grid" x1={x.clone()} x2={x} y1="0" y2={tenths(H)} /> }
        }));
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
    let value_labels = values.iter().map(|&v| {
        html! {
            <span class="tick y" style={format!("top:{}", pct(frame.y(v), H))}>{ one_decimal(v) }</span>
        }
    });
    let style = if props.span.shows_times() {
        TimeStyle::Time
    } else {
        TimeStyle::Date
    };
    let time_labels = times.iter().map(|&at| {
        html! {
            <span class="tick x" style={format!("left:{}", pct(frame.x(at), W))}>{ local_time(at, style) }</span>
        }
    });
    let text = props
        .lines
        .iter()
        .map(|l| summary(l, props.span))
        .collect::<Vec<_>>()
        .join(" ");
    html! {
        <figure class={classes!("graph", props.small.then_some("small"))} data-testid={props.testid.clone()}
            data-points={points.to_string()} data-span={props.span.as_str()}>
            <div class="plot" aria-hidden="true">
                <svg viewBox={format!("0 0 {} {}", tenths(W), tenths(H))} preserveAspectRatio="none" focusable="false">
                    { for grid }
                    { for shapes }
                </svg>
                { for value_labels }
                { for time_labels }
                if points == 0 {
                    <p class="graph-empty muted">{ t(K::NoHistoryYet) }</p>
                }
            </div>
            <figcaption class="visually-hidden" data-testid="graph-summary">{ text }</figcaption>
        </figure>
    }
}
