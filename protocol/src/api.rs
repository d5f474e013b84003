//! The bridge's JSON answers under `/api` (`docs/protocol.md` §2.2, §2.5)
//! other than the list itself ([`crate::delta`]) and one server's details
//! ([`crate::entry::ServerDetails`]): the histories, the shields.io badges
//! and the error body. The bridge writes its answers with these types and
//! the page reads them with the same ones; with the `openapi` feature they
//! also give the schemas of the OpenAPI document ([`crate::openapi`]), so
//! the document cannot drift from the answers.

use serde::{Deserialize, Serialize};

use crate::ServerKey;

/// A range of history a client may ask for (`?range=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum HistoryRange {
    #[serde(rename = "1h")]
    Hour,
    #[serde(rename = "24h")]
    Day,
    #[serde(rename = "7d")]
    Week,
    #[serde(rename = "30d")]
    Month,
    /// Hourly points over 90 days.
    #[serde(rename = "90d")]
    Quarter,
    #[serde(rename = "1y")]
    Year,
}

impl HistoryRange {
    /// Every range, shortest first.
    pub const ALL: [HistoryRange; 6] = [
        HistoryRange::Hour,
        HistoryRange::Day,
        HistoryRange::Week,
        HistoryRange::Month,
        HistoryRange::Quarter,
        HistoryRange::Year,
    ];

    /// The name on the wire (`range=24h`, `"range":"24h"`).
    pub fn as_str(self) -> &'static str {
        match self {
            HistoryRange::Hour => "1h",
            HistoryRange::Day => "24h",
            HistoryRange::Week => "7d",
            HistoryRange::Month => "30d",
            HistoryRange::Quarter => "90d",
            HistoryRange::Year => "1y",
        }
    }

    /// The range named `s`; `None` for any other text (the bridge answers
    /// 400).
    pub fn parse(s: &str) -> Option<HistoryRange> {
        HistoryRange::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// How far back the range reaches, in milliseconds: what the bridge
    /// answers and what the page's time axis spans.
    pub fn span_ms(self) -> i64 {
        const H: i64 = 3_600_000;
        match self {
            HistoryRange::Hour => H,
            HistoryRange::Day => 24 * H,
            HistoryRange::Week => 7 * 24 * H,
            HistoryRange::Month => 30 * 24 * H,
            HistoryRange::Quarter => 90 * 24 * H,
            HistoryRange::Year => 365 * 24 * H,
        }
    }
}

/// One interval of a server's history, written as the array
/// `[t, players, max, online, open, peak]`: `t` the start of the interval
/// (Unix milliseconds), `players` the mean number of players while online
/// (`null` if it was offline throughout), `max` the largest `max` (`null`
/// likewise), `online` and `open` the shares (0 to 1) of the interval it
/// was online and had its lobby open, `peak` the most players seen at one
/// sample (`null` if offline throughout, or for an interval recorded
/// before peaks were). The peak is last so that a client reading five
/// elements reads what it always did; one reading six accepts five.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ServerPoint(
    pub i64,
    pub Option<f64>,
    pub Option<u32>,
    pub f64,
    pub f64,
    #[serde(default)] pub Option<u32>,
);

/// `GET /api/servers/{key}/history?range=R`: oldest point first; an
/// interval without any sample has no point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ServerHistory {
    pub key: ServerKey,
    pub range: HistoryRange,
    /// Seconds between the points' starts.
    pub step: u64,
    pub points: Vec<ServerPoint>,
}

/// One interval of the lobby's totals, written as the array
/// `[t, servers, players, peakPlayers]`: the start of the interval (Unix
/// milliseconds), the mean numbers of servers and players online in it,
/// and the most players online at one sample (`null` for an interval
/// recorded before peaks were).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LobbyPoint(pub i64, pub f64, pub f64, #[serde(default)] pub Option<u32>);

/// The days `/week` folds into one week.
pub const WEEK_DAYS: u32 = 28;
/// The hours of a week, the entries of [`Week::hours`].
pub const WEEK_HOURS: usize = 168;

/// One hour of the week (`GET /api/week`, `/api/servers/{key}/week`),
/// written as the array `[players, peak, open, room]` over the same hour
/// of each of the last [`WEEK_DAYS`] days' weekdays: `players` the mean
/// players while online, `peak` the most seen at one sample, `open` the
/// share of the hour the lobby was open, `room` the share in which it was
/// open with at least one player and a free slot (a game about to start).
/// For the whole lobby: players online in total, and the shares in which
/// at least one server was open (with room). `null`s for an hour without
/// samples (each value alone where only it is unknown: offline
/// throughout, or recorded before the value was).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WeekHour(
    pub Option<f64>,
    pub Option<u32>,
    pub Option<f64>,
    pub Option<f64>,
);

/// `GET /api/servers/{key}/week` and `GET /api/week`: the last
/// [`WEEK_DAYS`] days folded into the [`WEEK_HOURS`] hours of a week, in
/// UTC, Monday 00:00 first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Week {
    /// The server's key; absent for the whole lobby.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<ServerKey>,
    /// Days folded ([`WEEK_DAYS`]).
    pub days: u32,
    /// [`WEEK_HOURS`] entries, Monday 00:00 UTC first.
    #[cfg_attr(feature = "openapi", schema(min_items = 168, max_items = 168))]
    pub hours: Vec<WeekHour>,
}

// The points' schemas by hand: utoipa describes a tuple struct as an array
// of objects. Each item's schema sits beside the field it describes; the
// bridge's test validates real points against them.
#[cfg(feature = "openapi")]
mod point_schemas {
    use utoipa::{
        openapi::{schema::Schema, RefOr},
        PartialSchema, ToSchema,
    };

    use super::{LobbyPoint, ServerPoint, WeekHour};
    use crate::schema::{millis, nullable_share, number, share, tuple};

    impl PartialSchema for ServerPoint {
        fn schema() -> RefOr<Schema> {
            tuple(
                "One interval of a server's history: [t, players, max, online, open, peak]",
                [
                    millis("t: the start of the interval, Unix milliseconds"),
                    number(
                        "players: the mean while online; null if offline throughout",
                        true,
                    ),
                    number("max: the largest max; null if offline throughout", true),
                    share("online: the share of the interval it was online"),
                    share("open: the share of the interval its lobby was open"),
                    number(
                        "peak: the most players at one sample; null if offline throughout or recorded before peaks were",
                        true,
                    ),
                ],
            )
        }
    }

    impl ToSchema for ServerPoint {}

    impl PartialSchema for LobbyPoint {
        fn schema() -> RefOr<Schema> {
            tuple(
                "One interval of the lobby's totals: [t, servers, players, peakPlayers]",
                [
                    millis("t: the start of the interval, Unix milliseconds"),
                    number("servers: the mean number online", false),
                    number("players: the mean number online", false),
                    number(
                        "peakPlayers: the most players online at one sample; null if recorded before peaks were",
                        true,
                    ),
                ],
            )
        }
    }

    impl ToSchema for LobbyPoint {}

    impl PartialSchema for WeekHour {
        fn schema() -> RefOr<Schema> {
            tuple(
                "One hour of the week over the days folded: [players, peak, open, room]; nulls for an hour without samples",
                [
                    number("players: the mean while online", true),
                    number("peak: the most players at one sample", true),
                    nullable_share("open: the share of the hour the lobby was open"),
                    nullable_share(
                        "room: the share of the hour the lobby was open with at least one player and a free slot",
                    ),
                ],
            )
        }
    }

    impl ToSchema for WeekHour {}
}

/// `GET /api/history?range=R`: the lobby's totals, oldest point first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LobbyHistory {
    pub range: HistoryRange,
    /// Seconds between the points' starts.
    pub step: u64,
    pub points: Vec<LobbyPoint>,
}

/// The CSV form of a history answer (`?format=csv`, `docs/protocol.md`
/// §2.6): a header row naming the columns of the JSON points, then one
/// row per point in the same order, `null` an empty field. Numbers only,
/// so nothing needs quoting.
pub trait Csv {
    /// The header row's names.
    const COLUMNS: &'static [&'static str];
    /// Each row's fields.
    fn rows(&self) -> Vec<Vec<Option<String>>>;

    /// The whole text, lines ended by CRLF (RFC 4180).
    fn csv(&self) -> String {
        let mut out = Self::COLUMNS.join(",");
        out.push_str("\r\n");
        for row in self.rows() {
            let fields: Vec<String> = row.into_iter().map(Option::unwrap_or_default).collect();
            out.push_str(&fields.join(","));
            out.push_str("\r\n");
        }
        out
    }
}

fn field<T: ToString>(v: T) -> Option<String> {
    Some(v.to_string())
}

impl Csv for ServerHistory {
    const COLUMNS: &'static [&'static str] = &["t", "players", "max", "online", "open", "peak"];
    fn rows(&self) -> Vec<Vec<Option<String>>> {
        self.points
            .iter()
            .map(|&ServerPoint(t, players, max, online, open, peak)| {
                vec![
                    field(t),
                    players.and_then(field),
                    max.and_then(field),
                    field(online),
                    field(open),
                    peak.and_then(field),
                ]
            })
            .collect()
    }
}

impl Csv for LobbyHistory {
    const COLUMNS: &'static [&'static str] = &["t", "servers", "players", "peakPlayers"];
    fn rows(&self) -> Vec<Vec<Option<String>>> {
        self.points
            .iter()
            .map(|&LobbyPoint(t, servers, players, peak)| {
                vec![
                    field(t),
                    field(servers),
                    field(players),
                    peak.and_then(field),
                ]
            })
            .collect()
    }
}

impl Csv for Week {
    const COLUMNS: &'static [&'static str] = &["players", "peak", "open", "room"];
    fn rows(&self) -> Vec<Vec<Option<String>>> {
        self.hours
            .iter()
            .map(|&WeekHour(players, peak, open, room)| {
                vec![
                    players.and_then(field),
                    peak.and_then(field),
                    open.and_then(field),
                    room.and_then(field),
                ]
            })
            .collect()
    }
}

/// The body of every error answer under `/api` (400, 404, 405, 429, 503,
/// and 401 on the admin's endpoints): a sentence for a person, not a code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ApiError {
    pub error: String,
    /// The request's field at fault, when one is (a 400 of the admin's
    /// webhook API): a page shows the error beside that field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

impl ApiError {
    /// The JSON text of an error answer saying `message`.
    pub fn json(message: &str) -> String {
        crate::json::to_string(&ApiError {
            error: message.to_owned(),
            field: None,
        })
    }
}

impl From<&crate::watch::FieldError> for ApiError {
    fn from(e: &crate::watch::FieldError) -> Self {
        ApiError {
            error: e.to_string(),
            field: Some(e.field.to_string()),
        }
    }
}

/// A shields.io endpoint badge (`GET /api/shields.json`,
/// `GET /api/shields/{key}.json`): shields.io draws it in the style a site
/// asks for (`https://img.shields.io/endpoint?url=…`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Shield {
    /// Always 1 (the version of shields.io's endpoint format).
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 1))]
    pub schema_version: u8,
    /// The left part: "lobby", or the server's name (cut short).
    pub label: String,
    /// The right part: what is online, or the server's players and state.
    pub message: String,
    /// A shields.io colour name.
    pub color: String,
    /// How long shields.io may keep the badge, in seconds.
    pub cache_seconds: u32,
}

impl Shield {
    /// The version of shields.io's endpoint format this is written in.
    pub const SCHEMA_VERSION: u8 = 1;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_round_trip_by_name() {
        for r in HistoryRange::ALL {
            assert_eq!(HistoryRange::parse(r.as_str()), Some(r));
            let json = serde_json::to_string(&r).unwrap();
            assert_eq!(json, format!("\"{}\"", r.as_str()));
            assert_eq!(serde_json::from_str::<HistoryRange>(&json).unwrap(), r);
        }
        assert_eq!(HistoryRange::parse("2h"), None);
        assert_eq!(HistoryRange::parse("24H"), None);
    }

    #[test]
    fn points_are_arrays_with_nulls() {
        let h = ServerHistory {
            key: ServerKey(1),
            range: HistoryRange::Day,
            step: 60,
            points: vec![
                ServerPoint(0, Some(2.5), Some(4), 1.0, 0.5, Some(4)),
                ServerPoint(60_000, None, None, 0.0, 0.0, None),
            ],
        };
        let text = serde_json::to_string(&h).unwrap();
        assert_eq!(
            text,
            r#"{"key":"0000000000000001","range":"24h","step":60,"points":[[0,2.5,4,1.0,0.5,4],[60000,null,null,0.0,0.0,null]]}"#
        );
        assert_eq!(serde_json::from_str::<ServerHistory>(&text).unwrap(), h);
        // Five elements (an older bridge) still read: no peak.
        assert_eq!(
            serde_json::from_str::<ServerPoint>("[0,2.5,4,1.0,0.5]").unwrap(),
            ServerPoint(0, Some(2.5), Some(4), 1.0, 0.5, None)
        );
        assert_eq!(
            serde_json::from_str::<LobbyPoint>("[0,2.0,7.5]").unwrap(),
            LobbyPoint(0, 2.0, 7.5, None)
        );
        let lobby = LobbyHistory {
            range: HistoryRange::Year,
            step: 86_400,
            points: vec![LobbyPoint(0, 2.0, 7.5, Some(9))],
        };
        let text = serde_json::to_string(&lobby).unwrap();
        assert_eq!(
            text,
            r#"{"range":"1y","step":86400,"points":[[0,2.0,7.5,9]]}"#
        );
        assert_eq!(serde_json::from_str::<LobbyHistory>(&text).unwrap(), lobby);
        let week = Week {
            key: None,
            days: WEEK_DAYS,
            hours: vec![
                WeekHour(Some(1.5), Some(3), Some(0.5), Some(0.25)),
                WeekHour(None, None, None, None),
            ],
        };
        let text = serde_json::to_string(&week).unwrap();
        assert_eq!(
            text,
            r#"{"days":28,"hours":[[1.5,3,0.5,0.25],[null,null,null,null]]}"#
        );
        assert_eq!(serde_json::from_str::<Week>(&text).unwrap(), week);
    }

    #[test]
    fn csv_has_a_header_and_the_points_columns() {
        let h = ServerHistory {
            key: ServerKey(1),
            range: HistoryRange::Day,
            step: 60,
            points: vec![
                ServerPoint(0, Some(2.5), Some(4), 1.0, 0.5, Some(4)),
                ServerPoint(60_000, None, None, 0.0, 0.0, None),
            ],
        };
        assert_eq!(
            h.csv(),
            "t,players,max,online,open,peak\r\n0,2.5,4,1,0.5,4\r\n60000,,,0,0,\r\n"
        );
        let lobby = LobbyHistory {
            range: HistoryRange::Year,
            step: 86_400,
            points: vec![LobbyPoint(0, 2.0, 7.5, None)],
        };
        assert_eq!(lobby.csv(), "t,servers,players,peakPlayers\r\n0,2,7.5,\r\n");
        let week = Week {
            key: None,
            days: WEEK_DAYS,
            hours: vec![WeekHour(Some(1.5), Some(3), Some(0.5), None)],
        };
        assert_eq!(week.csv(), "players,peak,open,room\r\n1.5,3,0.5,\r\n");
    }

    #[test]
    fn errors_and_shields_have_their_wire_names() {
        assert_eq!(
            ApiError::json("no \"such\" key"),
            r#"{"error":"no \"such\" key"}"#
        );
        let shield = Shield {
            schema_version: Shield::SCHEMA_VERSION,
            label: "lobby".into(),
            message: "2 servers, 5 players".into(),
            color: "brightgreen".into(),
            cache_seconds: 300,
        };
        assert_eq!(
            serde_json::to_string(&shield).unwrap(),
            r#"{"schemaVersion":1,"label":"lobby","message":"2 servers, 5 players","color":"brightgreen","cacheSeconds":300}"#
        );
    }
}
