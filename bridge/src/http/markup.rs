//! Text written into the documents the bridge makes itself (the pages'
//! HTML heads, the badges' and cards' SVG): one escaping rule for all of
//! them, since a server's name may hold any text.

/// Text safe inside an HTML or XML element or a quoted attribute: `&<>"'`
/// escaped; tabs and line breaks become spaces (an attribute or a line of
/// a drawing holds one line); other control characters, and the two that
/// XML 1.0 does not allow (U+FFFE, U+FFFF), dropped.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(' '),
            c if c.is_control() || matches!(c, '\u{FFFE}' | '\u{FFFF}') => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escaping_leaves_no_markup_and_keeps_every_script() {
        assert_eq!(
            escape(r#"<script>alert("x")</script> & 'y'"#),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;"
        );
        for text in [
            "שרת עברי مرحبا",
            "服务器 サーバー",
            "🎮 emoji 🇩🇪",
            "\u{202E}rtl",
        ] {
            assert_eq!(escape(text), text);
        }
        assert_eq!(escape("a\u{1}b\u{7f}c\u{85}d\u{FFFF}"), "abcd");
        assert_eq!(escape("a\tb\nc\rd"), "a b c d");
    }
}
