//! The Discord status card's preview on `/admin`: the message the bridge
//! would post now for the chosen servers (`POST
//! /api/admin/webhooks/preview`, the very body a `"discord-card"`
//! webhook sends), drawn as Discord draws an embed: its title, its lines
//! with the markdown the bridge writes (bold names linking to their pages,
//! the names' own markdown escaped) and its time. The card's words are the
//! bridge's; the frame around them is in the page's language.

use protocol::{watch::ServerFilter, webhook::CardEmbed};
use yew::prelude::*;

use super::{answer::use_admin_answer, api};
use crate::{
    i18n::{t, K},
    services::browser::{local_time, TimeStyle},
};

/// A run of a line's text, as Discord shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    pub text: String,
    pub bold: bool,
    /// Where it links (only `http` and `https` are made links).
    pub link: Option<String>,
}

/// A line of the card's markdown as runs of text: `\x` is `x` as it is,
/// `**` turns bold on and off, `[text](url)` links. That is all the
/// markdown the bridge writes; any other character is shown as written.
pub fn spans(line: &str) -> Vec<Span> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = Vec::new();
    let mut text = String::new();
    let mut bold = false;
    // The text of a link being read, after its `[`.
    let mut link: Option<String> = None;
    let flush = |out: &mut Vec<Span>, text: &mut String, bold: bool| {
        if !text.is_empty() {
            out.push(Span {
                text: std::mem::take(text),
                bold,
                link: None,
            });
        }
    };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            '\\' if next.is_some() => {
                link.as_mut().unwrap_or(&mut text).extend(next);
                i += 2;
            }
            '*' if next == Some('*') && link.is_none() => {
                flush(&mut out, &mut text, bold);
                bold = !bold;
                i += 2;
            }
            '[' if link.is_none() => {
                link = Some(String::new());
                i += 1;
            }
            ']' if link.is_some() && next == Some('(') => {
                let close = chars[i + 2..].iter().position(|&c| c == ')');
                let Some(close) = close else {
                    // No target: the brackets were text.
                    text.push('[');
                    text.extend(link.take());
                    text.push(']');
                    i += 1;
                    continue;
                };
                let url: String = chars[i + 2..i + 2 + close].iter().collect();
                flush(&mut out, &mut text, bold);
                let shown = link.take().unwrap_or_default();
                let web = url.starts_with("https://") || url.starts_with("http://");
                out.push(Span {
                    text: shown,
                    bold,
                    link: web.then_some(url),
                });
                i += close + 3;
            }
            c => {
                link.as_mut().unwrap_or(&mut text).push(c);
                i += 1;
            }
        }
    }
    if let Some(unclosed) = link {
        text.push('[');
        text.push_str(&unclosed);
    }
    flush(&mut out, &mut text, bold);
    out
}

/// One line of the card drawn.
fn line(line: &str) -> Html {
    html! {
        <p class="embed-line">
            { for spans(line).into_iter().map(|s| {
                let text = html! { { s.text } };
                let text = match s.link {
                    Some(href) => html! { <a {href}>{ text }</a> },
                    None => text,
                };
                if s.bold { html! { <strong>{ text }</strong> } } else { text }
            }) }
        </p>
    }
}

/// The embed as Discord shows it.
fn embed(e: &CardEmbed) -> Html {
    let color = format!("border-left-color: #{:06x}", e.color & 0xff_ff_ff);
    let at = js_sys::Date::parse(&e.timestamp);
    html! {
        <div class="discord-embed" style={color}>
            <p class="embed-title">{ for spans(&e.title).into_iter().map(|s| html! { { s.text } }) }</p>
            <div class="embed-description">
                { for e.description.lines().map(line) }
            </div>
            if at.is_finite() {
                <p class="embed-time">{ local_time(at, TimeStyle::DateTime) }</p>
            }
        </div>
    }
}

/// How long the servers must stay as they are before the preview is read
/// (while the admin types keys or a name).
const SETTLE_MS: u32 = 400;

/// Props of [`CardPreview`].
#[derive(Properties, PartialEq)]
pub struct CardPreviewProps {
    /// The servers the card shows; `None` while the form's are not valid.
    pub servers: Option<ServerFilter>,
    /// The tab is signed in: the API takes its token.
    pub signed_in: bool,
}

/// The preview of a status card of `servers`, read again when they change
/// or the admin asks.
#[component]
pub fn CardPreview(props: &CardPreviewProps) -> Html {
    let read = use_admin_answer(
        (props.signed_in, props.servers.clone()),
        SETTLE_MS,
        |(signed_in, servers)| {
            let servers = servers.filter(|_| signed_in)?;
            Some(async move { api::card_preview(&servers).await })
        },
    );
    let on_refresh = {
        let reload = read.reload.clone();
        Callback::from(move |_: MouseEvent| reload.emit(()))
    };
    let body = match (&read.answer, (*read.failed).clone()) {
        _ if props.servers.is_none() => {
            html! { <p class="muted">{ t(K::CardPreviewWaits) }</p> }
        }
        (_, Some(why)) => html! { <p class="error" role="alert">{ why }</p> },
        (None, None) => html! { <p class="muted">{ t(K::CardPreviewLoading) }</p> },
        (Some(card), None) => html! {
            <>{ for card.embeds.iter().map(embed) }</>
        },
    };
    html! {
        <figure class="discord-preview" data-testid="card-preview">
            <figcaption>{ t(K::CardPreview) }</figcaption>
            { body }
            if props.servers.is_some() && props.signed_in {
                <button type="button" class="refresh-preview" onclick={on_refresh}>
                    { t(K::RefreshPreview) }
                </button>
            }
        </figure>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(text: &str, bold: bool, link: Option<&str>) -> Span {
        Span {
            text: text.into(),
            bold,
            link: link.map(Into::into),
        }
    }

    #[test]
    fn the_bridges_lines_read_as_discord_shows_them() {
        assert_eq!(
            spans(
                r"**[Alpha\_\*x\* \[1\]](https://lobby.example/server/00000000000000ab)** · 3/8 players · lobby open"
            ),
            vec![
                span(
                    "Alpha_*x* [1]",
                    true,
                    Some("https://lobby.example/server/00000000000000ab")
                ),
                span(" · 3/8 players · lobby open", false, None),
            ]
        );
        assert_eq!(
            spans(r"**\@everyone \|\|y\|\|** · 0/4 players · in game"),
            vec![
                span("@everyone ||y||", true, None),
                span(" · 0/4 players · in game", false, None),
            ]
        );
        assert_eq!(spans("and 3 more"), vec![span("and 3 more", false, None)]);
        // Not a web link, and brackets without a target: text.
        assert_eq!(
            spans("[a](javascript:x) [b"),
            vec![span("a", false, None), span(" [b", false, None)]
        );
        assert_eq!(spans(""), vec![]);
    }
}
