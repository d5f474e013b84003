//! The week's busy hours as a heatmap: the last four weeks folded into
//! one (`/api/servers/{key}/week` or `/api/week`), in the player's local
//! time, with the sentence that names the busiest window and a link to
//! the CSV. The heatmap is a real table (a caption, a header per weekday
//! and hour, each cell's players and peak as text hidden from view), so a
//! screen reader reads what the colours show.

use protocol::api::{Week, WeekHour};
use yew::prelude::*;

use crate::{
    history::{csv_link, one_decimal},
    i18n::{t, tf, K},
    services::{
        api::read_answer,
        browser::{self, utc_offset_ms},
    },
    views::{
        fetch::{use_fetch, Load},
        server::{use_history, Dated, HISTORY_REFRESH_MS},
    },
    week::{busiest, clock, level, most, sentence, to_local, DAYS},
};

/// How often the week is read again: as often as the history, since a
/// refresh that finds the hour's answer unchanged is a free `304`.
const REFRESH_MS: u32 = HISTORY_REFRESH_MS;

/// Props of [`WeekHeatmap`].
#[derive(Properties, PartialEq)]
pub struct WeekHeatmapProps {
    /// The week's answer: `/api/week` or `/api/servers/{key}/week`.
    pub path: AttrValue,
    /// Also names the heading's id, so two heatmaps never share one.
    pub testid: AttrValue,
    /// Whether the history holds what `path` asks about: `Some(false)`
    /// for a server not recorded yet (an empty week, not asked for: the
    /// bridge would answer 404), `None` while that is not known (nothing
    /// shown yet).
    #[prop_or(Some(true))]
    pub recorded: Option<bool>,
}

/// One hour's text for a screen reader.
fn cell_text(h: &WeekHour) -> String {
    match h.0 {
        Some(players) => tf(
            K::WeekCell,
            &[
                &one_decimal(players),
                &h.1.map_or_else(|| "–".to_owned(), |p| p.to_string()),
            ],
        ),
        None => t(K::WeekNoSamples).to_owned(),
    }
}

/// The heatmap of the week at `path`, its sentence and its CSV link;
/// nothing while it loads or when the bridge keeps no history, an empty
/// week for a server not recorded yet.
#[component]
pub fn WeekHeatmap(props: &WeekHeatmapProps) -> Html {
    let asked = (props.recorded == Some(true)).then(|| props.path.to_string());
    let load = use_fetch(asked, 0, REFRESH_MS);
    let read = use_history(&load, read_answer::<Week>);
    // A server not recorded yet has an empty week (so has one the bridge
    // forgot since the page asked: 404).
    let (hours, at_ms) = match (&load, read, props.recorded) {
        (_, _, None) => return html! {},
        (_, _, Some(false)) | (Load::Missing, None, _) => (Vec::new(), browser::now_ms()),
        (_, Some(Dated { value, at_ms }), _) => (value.hours.clone(), at_ms),
        _ => return html! {},
    };
    let local = to_local(&hours, utc_offset_ms(at_ms));
    let top = most(&local);
    let title = format!("{}-title", props.testid);
    let head = (0..24).map(|h| {
        html! {
            <th scope="col">
                <span class={if h % 6 == 0 { "tick" } else { "visually-hidden" }}>{ clock(h) }</span>
            </th>
        }
    });
    let rows = DAYS.iter().enumerate().map(|(d, &day)| {
        let cells = local[d * 24..d * 24 + 24].iter().map(|h| {
            html! {
                <td class={format!("l{}", level(h, top))}>
                    <span class="visually-hidden">{ cell_text(h) }</span>
                </td>
            }
        });
        html! {
            <tr><th scope="row">{ t(day) }</th>{ for cells }</tr>
        }
    });
    html! {
        <section class="week" aria-labelledby={title.clone()} data-testid={props.testid.clone()}>
            <h3 id={title}>{ t(K::Week) }</h3>
            <p class="week-sentence" data-testid="week-sentence">{ sentence(busiest(&local)) }</p>
            <div class="week-scroll">
                <table class="week-map">
                    <caption class="visually-hidden">{ t(K::WeekTable) }</caption>
                    <thead>
                        <tr>
                            <th scope="col"><span class="visually-hidden">{ t(K::WeekDay) }</span></th>
                            { for head }
                        </tr>
                    </thead>
                    <tbody>{ for rows }</tbody>
                </table>
            </div>
            <p class="muted week-help">{ t(K::WeekHelp) }</p>
            <p><a href={csv_link(&props.path)} download="week.csv">{ t(K::DownloadWeekCsv) }</a></p>
        </section>
    }
}
