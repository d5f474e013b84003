//! The snippets a site copies to show one server's badge or live card:
//! HTML, Markdown, BBCode and an `<iframe>`, with absolute URLs on the
//! lobby's origin and the server's name escaped for each format. Pure
//! text, tested natively.

use protocol::ServerKey;

/// One of the formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Html,
    Markdown,
    BbCode,
    Iframe,
}

impl Format {
    pub const ALL: [Format; 4] = [
        Format::Html,
        Format::Markdown,
        Format::BbCode,
        Format::Iframe,
    ];

    /// The format's name, as its field is labelled.
    pub fn label(self) -> &'static str {
        match self {
            Format::Html => "HTML",
            Format::Markdown => "Markdown",
            Format::BbCode => "BBCode",
            Format::Iframe => crate::i18n::t(crate::i18n::K::IframeCard),
        }
    }

    /// A stable id for the snippet's element (`snippet-html`).
    pub fn id(self) -> &'static str {
        match self {
            Format::Html => "snippet-html",
            Format::Markdown => "snippet-markdown",
            Format::BbCode => "snippet-bbcode",
            Format::Iframe => "snippet-iframe",
        }
    }
}

/// The lobby's addresses for one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Links {
    /// The server's page (`/server/{key}`).
    pub page: String,
    /// Its badge (`/badge/{key}.svg`).
    pub badge: String,
    /// Its compact live card, for an iframe (`/embed/server/{key}`).
    pub card: String,
}

impl Links {
    /// The addresses on `origin` (`https://lobby.example.org`).
    pub fn new(origin: &str, key: ServerKey) -> Links {
        Links {
            page: format!("{origin}/server/{key}"),
            badge: format!("{origin}/badge/{key}.svg"),
            card: format!("{origin}/embed/server/{key}"),
        }
    }

    /// The snippet of `format` for the server called `name`.
    pub fn snippet(&self, format: Format, name: &str) -> String {
        let Links { page, badge, card } = self;
        match format {
            Format::Html => {
                let alt = html_attr(name);
                format!(r#"<a href="{page}"><img src="{badge}" alt="{alt}"></a>"#)
            }
            Format::Markdown => format!("[![{}]({badge})]({page})", markdown_text(name)),
            // BBCode has no escape; its image tag takes no alt text.
            Format::BbCode => format!("[url={page}][img]{badge}[/img][/url]"),
            Format::Iframe => {
                let title = html_attr(name);
                format!(
                    r#"<iframe src="{card}" title="{title}" width="360" height="260" style="border:0"></iframe>"#
                )
            }
        }
    }
}

/// `s` safe inside a double-quoted HTML attribute.
fn html_attr(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// `s` as Markdown text that cannot close the image's brackets or start
/// markup.
fn markdown_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(
            c,
            '\\' | '[' | ']' | '(' | ')' | '*' | '_' | '`' | '!' | '<' | '>'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_link_the_page_and_show_the_badge() {
        let l = Links::new("https://lobby.example.org", ServerKey(0xab));
        assert_eq!(l.page, "https://lobby.example.org/server/00000000000000ab");
        assert_eq!(
            l.snippet(Format::Html, "Feuerland"),
            r#"<a href="https://lobby.example.org/server/00000000000000ab"><img src="https://lobby.example.org/badge/00000000000000ab.svg" alt="Feuerland"></a>"#
        );
        assert_eq!(
            l.snippet(Format::Markdown, "Feuerland"),
            "[![Feuerland](https://lobby.example.org/badge/00000000000000ab.svg)](https://lobby.example.org/server/00000000000000ab)"
        );
        assert_eq!(
            l.snippet(Format::BbCode, "x"),
            "[url=https://lobby.example.org/server/00000000000000ab][img]https://lobby.example.org/badge/00000000000000ab.svg[/img][/url]"
        );
        assert!(l.snippet(Format::Iframe, "x").starts_with(
            r#"<iframe src="https://lobby.example.org/embed/server/00000000000000ab" title="x""#
        ));
    }

    #[test]
    fn names_cannot_break_out() {
        let l = Links::new("http://h", ServerKey(1));
        let evil = r#"a"><script>x</script>](javascript:1)"#;
        let html = l.snippet(Format::Html, evil);
        assert!(!html.contains("<script"), "{html}");
        assert!(html.contains("alt=\"a&quot;&gt;&lt;script&gt;"), "{html}");
        let iframe = l.snippet(Format::Iframe, evil);
        assert!(!iframe.contains("<script"), "{iframe}");
        let md = l.snippet(Format::Markdown, evil);
        assert!(md.contains(r"\]\(javascript:1\)"), "{md}");
        assert!(md.ends_with("](http://h/server/0000000000000001)"), "{md}");
    }
}
