//! Joining a server (`docs/protocol.md` §2.6): the operator's URL template
//! (`--join-url`, for example `bomber://{address}:{port}`) and the link it
//! gives for one server. The bridge checks the template once at start and
//! fills it for `/api/servers/{key}` and `/join/{key}`; the page fills the
//! same template for its rows: one rule, here.
//!
//! Nothing a server registers can change what the link is: the scheme is
//! the operator's, fixed before the first placeholder; the address and the
//! port are checked by the registration's own rules ([`ServerAddress`],
//! [`ServerPort`]) and percent-encoded, so they stay data inside the URL.

use std::{fmt, net::Ipv6Addr};

use thiserror::Error;

use crate::{ServerAddress, ServerPort, ValidationError};

/// The placeholder for the server's address (an IPv6 address in brackets).
pub const ADDRESS: &str = "{address}";
/// The placeholder for the server's port.
pub const PORT: &str = "{port}";
/// Longest template, in bytes.
pub const MAX_TEMPLATE_LEN: usize = 1024;
/// Most placeholders in one template, so a filled link stays small (an
/// address has at most 253 characters).
pub const MAX_PLACEHOLDERS: usize = 8;
/// Schemes a link must never have: they run script or read local files in
/// the browser instead of handing the link to a game.
pub const FORBIDDEN_SCHEMES: [&str; 4] = ["javascript", "data", "vbscript", "file"];

/// Why a join URL template is refused. The bridge refuses to start with
/// one and says which of these it is.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TemplateError {
    #[error("the join URL template is empty")]
    Empty,
    #[error("the join URL template may have at most {MAX_TEMPLATE_LEN} bytes")]
    TooLong,
    #[error("the join URL template may only hold printable ASCII without spaces (percent-encode anything else); found {0:?}")]
    Character(char),
    #[error("the join URL template must start with a scheme, such as `mygame:` or `https:`")]
    NoScheme,
    #[error("the join URL template must not use the scheme `{0}:`")]
    ForbiddenScheme(String),
    #[error("the join URL template lacks the placeholder {0}")]
    MissingPlaceholder(&'static str),
    #[error("the join URL template may hold only the placeholders {{address}} and {{port}} (found {0:?}); other braces are not allowed in a URL")]
    UnknownPlaceholder(String),
    #[error("the join URL template may hold at most {MAX_PLACEHOLDERS} placeholders")]
    TooManyPlaceholders,
}

/// A checked join URL template: printable ASCII, a scheme of its own that
/// is none of [`FORBIDDEN_SCHEMES`] (compared without regard to case), and
/// both placeholders, [`ADDRESS`] and [`PORT`] (a link without either would
/// send every player to the same place), each at least once and no other
/// braces.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct JoinTemplate(String);

impl JoinTemplate {
    /// Checks `text`. Leading or trailing spaces and control characters
    /// are refused rather than trimmed: browsers drop them (and tabs and
    /// newlines anywhere) before reading the scheme, so `" javascript:"`
    /// or `"java\tscript:"` would otherwise pass as something else.
    pub fn parse(text: &str) -> Result<Self, TemplateError> {
        if text.is_empty() {
            return Err(TemplateError::Empty);
        }
        if text.len() > MAX_TEMPLATE_LEN {
            return Err(TemplateError::TooLong);
        }
        if let Some(c) = text.chars().find(|c| !c.is_ascii_graphic()) {
            return Err(TemplateError::Character(c));
        }
        let scheme = scheme_of(text).ok_or(TemplateError::NoScheme)?;
        let lower = scheme.to_ascii_lowercase();
        if FORBIDDEN_SCHEMES.contains(&lower.as_str()) {
            return Err(TemplateError::ForbiddenScheme(lower));
        }
        let mut count = 0;
        let (mut address, mut port) = (false, false);
        for piece in Pieces::new(text) {
            match piece {
                Piece::Text(_) => {}
                Piece::Address => address = true,
                Piece::Port => port = true,
                Piece::Unknown(other) => {
                    return Err(TemplateError::UnknownPlaceholder(other.to_owned()))
                }
            }
            if !matches!(piece, Piece::Text(_)) {
                count += 1;
            }
        }
        if !address {
            return Err(TemplateError::MissingPlaceholder(ADDRESS));
        }
        if !port {
            return Err(TemplateError::MissingPlaceholder(PORT));
        }
        if count > MAX_PLACEHOLDERS {
            return Err(TemplateError::TooManyPlaceholders);
        }
        Ok(Self(text.to_owned()))
    }

    /// The template as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The link to the server at `address` and `port`: both checked by the
    /// registration's rules, the address percent-encoded (an IPv6 address
    /// in brackets, as a URL writes it), the port in decimal.
    pub fn fill(&self, address: &str, port: u16) -> Result<String, ValidationError> {
        let address = ServerAddress::parse(address)?;
        let port = ServerPort::new(u64::from(port))?.get();
        let host = match address.as_str().parse::<Ipv6Addr>() {
            Ok(v6) => format!("[{v6}]"),
            Err(_) => encode(address.as_str()),
        };
        let mut out = String::with_capacity(self.0.len() + 2 * host.len());
        for piece in Pieces::new(&self.0) {
            match piece {
                Piece::Text(text) | Piece::Unknown(text) => out.push_str(text),
                Piece::Address => out.push_str(&host),
                Piece::Port => out.push_str(&port.to_string()),
            }
        }
        Ok(out)
    }
}

impl fmt::Display for JoinTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::str::FromStr for JoinTemplate {
    type Err = TemplateError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// The scheme of a URL (RFC 3986: a letter, then letters, digits, `+`,
/// `-` or `.`, up to the first `:`), or `None` if it has none.
fn scheme_of(text: &str) -> Option<&str> {
    let (scheme, _) = text.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
    .then_some(scheme)
}

/// Every byte of `text` outside RFC 3986's unreserved characters as `%XX`.
/// A checked hostname or IPv4 address has none; encoding them anyway keeps
/// the rule local: whatever passes the address's check stays data.
fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A template cut at its placeholders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece<'a> {
    Text(&'a str),
    Address,
    Port,
    /// A brace that opens or closes no known placeholder, with what follows
    /// up to its closing brace (or the brace alone).
    Unknown(&'a str),
}

struct Pieces<'a> {
    rest: &'a str,
}

impl<'a> Pieces<'a> {
    fn new(text: &'a str) -> Self {
        Self { rest: text }
    }
}

impl<'a> Iterator for Pieces<'a> {
    type Item = Piece<'a>;

    fn next(&mut self) -> Option<Piece<'a>> {
        if self.rest.is_empty() {
            return None;
        }
        let (piece, len) = if self.rest.starts_with(ADDRESS) {
            (Piece::Address, ADDRESS.len())
        } else if self.rest.starts_with(PORT) {
            (Piece::Port, PORT.len())
        } else if self.rest.starts_with('{') {
            let len = self.rest.find('}').map_or(1, |end| end + 1);
            (Piece::Unknown(&self.rest[..len]), len)
        } else if self.rest.starts_with('}') {
            (Piece::Unknown(&self.rest[..1]), 1)
        } else {
            let len = self.rest.find(['{', '}']).unwrap_or(self.rest.len());
            (Piece::Text(&self.rest[..len]), len)
        };
        self.rest = &self.rest[len..];
        Some(piece)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template(text: &str) -> JoinTemplate {
        JoinTemplate::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn good_templates_are_kept_as_given() {
        for text in [
            "bomber://{address}:{port}",
            "https://play.example/join?host={address}&port={port}",
            "steam://connect/{address}:{port}",
            "x-game+v2.0:{port}@{address}",
            "HTTPS://play.example/{address}/{port}/{address}",
        ] {
            assert_eq!(template(text).as_str(), text);
        }
    }

    #[test]
    fn refused_templates_say_why() {
        use TemplateError as E;
        let cases: &[(&str, TemplateError)] = &[
            ("", E::Empty),
            ("bomber://{address}", E::MissingPlaceholder(PORT)),
            ("bomber://host:{port}", E::MissingPlaceholder(ADDRESS)),
            ("bomber://play.example/", E::MissingPlaceholder(ADDRESS)),
            ("{address}:{port}", E::NoScheme),
            ("//{address}:{port}", E::NoScheme),
            ("1game://{address}:{port}", E::NoScheme),
            ("play.example/{address}/{port}", E::NoScheme),
            (
                "javascript:alert('{address}{port}')",
                E::ForbiddenScheme("javascript".into()),
            ),
            (
                "JavaScript:alert({address},{port})",
                E::ForbiddenScheme("javascript".into()),
            ),
            (
                "data:text/html,{address}{port}",
                E::ForbiddenScheme("data".into()),
            ),
            (
                "VBScript:{address}{port}",
                E::ForbiddenScheme("vbscript".into()),
            ),
            (
                "file:///{address}/{port}",
                E::ForbiddenScheme("file".into()),
            ),
            (" javascript:{address}{port}", E::Character(' ')),
            ("\u{1}javascript:{address}{port}", E::Character('\u{1}')),
            ("java\tscript:{address}{port}", E::Character('\t')),
            ("java\nscript:{address}{port}", E::Character('\n')),
            ("bomber://{address}:{port} ", E::Character(' ')),
            ("spiel://{address}:{port}/ü", E::Character('ü')),
            (
                "bomber://{host}:{port}",
                E::UnknownPlaceholder("{host}".into()),
            ),
            (
                "bomber://{address}:{port}/{",
                E::UnknownPlaceholder("{".into()),
            ),
            (
                "bomber://{address}:{port}}",
                E::UnknownPlaceholder("}".into()),
            ),
            (
                "bomber://{ADDRESS}:{port}",
                E::UnknownPlaceholder("{ADDRESS}".into()),
            ),
        ];
        for (text, want) in cases {
            assert_eq!(JoinTemplate::parse(text).as_ref(), Err(want), "{text:?}");
            assert!(!want.to_string().is_empty());
        }
        let long = format!("g://{}{{address}}{{port}}", "a".repeat(MAX_TEMPLATE_LEN));
        assert_eq!(JoinTemplate::parse(&long), Err(E::TooLong));
        let many = format!("g://{}", "{address}{port}".repeat(5));
        assert_eq!(JoinTemplate::parse(&many), Err(E::TooManyPlaceholders));
    }

    #[test]
    fn filling_checks_and_encodes_the_address_and_port() {
        let t = template("bomber://{address}:{port}");
        assert_eq!(
            t.fill("203.0.113.5", 20001).as_deref(),
            Ok("bomber://203.0.113.5:20001")
        );
        assert_eq!(
            t.fill("play.example.org", 7).as_deref(),
            Ok("bomber://play.example.org:7")
        );
        // IPv6 in brackets, as a URL writes it (and written the standard way).
        assert_eq!(
            t.fill("2001:DB8:0:0::1", 20001).as_deref(),
            Ok("bomber://[2001:db8::1]:20001")
        );
        let q = template("https://play.example/join?host={address}&port={port}&again={address}");
        assert_eq!(
            q.fill("::1", 1).as_deref(),
            Ok("https://play.example/join?host=[::1]&port=1&again=[::1]")
        );
        // Whatever the registration's rules refuse gives no link.
        for bad in [
            "evil.example/path",
            "a b",
            "x\"><script>",
            "host:80",
            "[::1]",
            "",
            "1.2.3.4.5",
            "javascript:alert(1)",
            "a%2Fb",
        ] {
            assert!(t.fill(bad, 20001).is_err(), "{bad:?}");
        }
        assert!(t.fill("203.0.113.5", 0).is_err());
        assert!(t.fill("203.0.113.5", crate::MASTER_PORT).is_err());
    }

    #[test]
    fn encoding_keeps_only_unreserved_characters() {
        assert_eq!(encode("a-b.c_d~e"), "a-b.c_d~e");
        assert_eq!(encode("a/b?c#d%e:f"), "a%2Fb%3Fc%23d%25e%3Af");
        assert_eq!(encode("ü"), "%C3%BC");
    }
}
