//! The OpenAPI 3.1 document of the bridge's HTTP API (`GET /api/openapi.json`,
//! `docs/protocol.md` §2.5): every `/api` answer, the badges, the cards, the errors and,
//! under `webhooks`, a `"standard"` webhook's body. Its schemas are derived
//! (utoipa's `ToSchema`) from the very types the bridge writes its answers
//! with, so the document cannot drift from them; every object they
//! describe is closed (`additionalProperties: false`), so an answer that
//! grows a field no longer validates until the type, and with it the
//! document, says so. Only with the `openapi` feature: the page does not
//! carry it.

use serde_json::Value;
use utoipa::{
    openapi::{
        header::HeaderBuilder,
        path::{OperationBuilder, ParameterBuilder, ParameterIn},
        request_body::RequestBodyBuilder,
        schema::{ObjectBuilder, SchemaFormat, Type},
        security::{Http, HttpAuthScheme, SecurityRequirement, SecurityScheme},
        ComponentsBuilder, ContentBuilder, HttpMethod, InfoBuilder, OpenApiBuilder, PathItem,
        PathsBuilder, Ref, RefOr, Required, ResponseBuilder, Schema,
    },
    ToSchema,
};

use crate::{
    api::{ApiError, HistoryRange, LobbyHistory, ServerHistory, Shield, Week},
    delta::ServerList,
    entry::ServerDetails,
    push::{PushKey, PushStatus, PushSubscribe, PushUnsubscribe, PushWatches},
    watch::{CardPreviewRequest, WebhookPatch, WebhookSpec},
    webhook::{Delivery, DiscordCard, Webhook, WebhookList, WebhookPayload},
    ServerKey,
};

/// The name of the admin token's security scheme.
const ADMIN_TOKEN: &str = "adminToken";

/// The error answers an operation may give, each a reusable response of
/// the document (`#/components/responses/…`) with an [`ApiError`] body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Failure {
    /// 400: a parameter out of its range (`range=`).
    BadRequest,
    /// 401: an admin endpoint without the admin token.
    Unauthorized,
    /// 403: a push subscription held by another `auth` secret.
    Forbidden,
    /// 404: no server with this key was seen (no webhook with this id).
    NotFound,
    /// 408: a request's body did not arrive in time.
    Timeout,
    /// 409: no room for another webhook.
    Conflict,
    /// 413: a request's body is larger than the API reads.
    TooLarge,
    /// 415: a request's body is declared as another media type than
    /// `application/json`.
    UnsupportedMediaType,
    /// 429: the client address spent its budget; `Retry-After` says when
    /// to ask again.
    TooManyRequests,
    /// 503: what the answer needs (the history's database, the master's
    /// first list) is not reachable now; `Retry-After` says when to ask
    /// again.
    Unavailable,
}

impl Failure {
    /// Every error answer the document describes.
    const ALL: [Failure; 10] = [
        Failure::BadRequest,
        Failure::Unauthorized,
        Failure::Forbidden,
        Failure::NotFound,
        Failure::Timeout,
        Failure::Conflict,
        Failure::TooLarge,
        Failure::UnsupportedMediaType,
        Failure::TooManyRequests,
        Failure::Unavailable,
    ];

    /// The HTTP status.
    fn status(self) -> u16 {
        match self {
            Failure::BadRequest => 400,
            Failure::Unauthorized => 401,
            Failure::Forbidden => 403,
            Failure::NotFound => 404,
            Failure::Timeout => 408,
            Failure::Conflict => 409,
            Failure::TooLarge => 413,
            Failure::UnsupportedMediaType => 415,
            Failure::TooManyRequests => 429,
            Failure::Unavailable => 503,
        }
    }

    /// The name of its reusable response.
    fn name(self) -> &'static str {
        match self {
            Failure::BadRequest => "BadRequest",
            Failure::Unauthorized => "Unauthorized",
            Failure::Forbidden => "Forbidden",
            Failure::NotFound => "NotFound",
            Failure::Timeout => "Timeout",
            Failure::Conflict => "Conflict",
            Failure::TooLarge => "TooLarge",
            Failure::UnsupportedMediaType => "UnsupportedMediaType",
            Failure::TooManyRequests => "TooManyRequests",
            Failure::Unavailable => "Unavailable",
        }
    }

    fn response(self) -> utoipa::openapi::Response {
        let description = match self {
            Failure::BadRequest => {
                "A parameter or the request's body is not one the API accepts; for a body, \
                 `field` names the field at fault."
            }
            Failure::Unauthorized => "The admin token is missing or wrong.",
            Failure::Forbidden => "The push subscription is held by another `auth` secret.",
            Failure::NotFound => {
                "Nothing with this name is known (a server key never seen, a webhook id \
                 that is not one, a push subscription the bridge does not hold, a source \
                 that holds none)."
            }
            Failure::Timeout => "The request's body did not arrive in time.",
            Failure::Conflict => "There is no room for another one (at most 50 webhooks).",
            Failure::TooLarge => {
                "The request's body is larger than the API reads (16 KiB for a webhook, 8 KiB \
                 for a push subscription)."
            }
            Failure::UnsupportedMediaType => {
                "The request's body is declared (`Content-Type`) as another media type than \
                 `application/json`."
            }
            Failure::TooManyRequests => {
                "The client address has no request left, or (a new push subscription) holds \
                 as many subscriptions as it may; ask again after `Retry-After` seconds."
            }
            Failure::Unavailable => {
                "The answer's source (the history's database, or the master's first list) \
                 cannot be reached now; ask again after `Retry-After` seconds. Without \
                 `Retry-After` (Web Push only), the bridge's Web Push is off: it has no \
                 contact for the push services, and `error` says so."
            }
        };
        let mut response = ResponseBuilder::new()
            .description(description)
            .content("application/json", json_of::<ApiError>());
        if matches!(self, Failure::TooManyRequests | Failure::Unavailable) {
            response = response.header(
                "Retry-After",
                HeaderBuilder::new()
                    .schema(integer())
                    .description(Some("Seconds to wait before asking again"))
                    .build(),
            );
        }
        response.build()
    }
}

/// One `GET` of the API: its path, what it answers and how it may fail.
struct Get {
    path: &'static str,
    id: &'static str,
    summary: &'static str,
    /// `{key}` in the path.
    key: bool,
    /// `?range=` (required).
    range: bool,
    /// `?format=csv` gives the answer as CSV too (`text/csv`).
    csv: bool,
    /// The media type and schema of a `200`.
    ok: (&'static str, RefOr<Schema>),
    failures: &'static [Failure],
}

impl Get {
    fn item(&self) -> PathItem {
        let mut op = OperationBuilder::new()
            .operation_id(Some(self.id))
            .summary(Some(self.summary));
        if self.key {
            op = op.parameter(
                ParameterBuilder::new()
                    .name("key")
                    .parameter_in(ParameterIn::Path)
                    .required(Required::True)
                    .schema(Some(schema_ref::<ServerKey>())),
            );
        }
        if self.range {
            op = op.parameter(
                ParameterBuilder::new()
                    .name("range")
                    .parameter_in(ParameterIn::Query)
                    .required(Required::True)
                    .schema(Some(schema_ref::<HistoryRange>())),
            );
        }
        if self.csv {
            op = op.parameter(
                ParameterBuilder::new()
                    .name("format")
                    .parameter_in(ParameterIn::Query)
                    .required(Required::False)
                    .description(Some(
                        "`csv` for the points as CSV: a header row, the same columns as the JSON points",
                    ))
                    .schema(Some(RefOr::T(Schema::from(
                        string().enum_values(Some(["json", "csv"])),
                    )))),
            );
        }
        let etag = HeaderBuilder::new()
            .schema(string())
            .description(Some(
                "Names this answer; send it as `If-None-Match` to revalidate",
            ))
            .build();
        let mut ok = ResponseBuilder::new()
            .description("The answer.")
            .header("ETag", etag)
            .content(
                self.ok.0,
                ContentBuilder::new()
                    .schema(Some(self.ok.1.clone()))
                    .build(),
            );
        if self.csv {
            ok = ok.content(
                "text/csv",
                ContentBuilder::new()
                    .schema(Some(RefOr::T(Schema::from(string().description(Some(
                        "CSV (RFC 4180): a header row naming the columns of the JSON points, then a row per point; an empty field for null",
                    ))))))
                    .build(),
            );
        }
        op = op.response("200", ok.build()).response(
            "304",
            ResponseBuilder::new()
                .description("Not modified: the `If-None-Match` names the current answer.")
                .build(),
        );
        for failure in self.failures {
            op = op.response(
                failure.status().to_string(),
                Ref::from_response_name(failure.name()),
            );
        }
        PathItem::new(HttpMethod::Get, op)
    }
}

fn schema_ref<T: ToSchema>() -> RefOr<Schema> {
    RefOr::Ref(Ref::from_schema_name(T::name()))
}

fn json_of<T: ToSchema>() -> utoipa::openapi::Content {
    ContentBuilder::new()
        .schema(Some(schema_ref::<T>()))
        .build()
}

/// An IPv4 or IPv6 address in its text form, as `std::net::IpAddr`
/// parses it.
fn ip_address() -> RefOr<Schema> {
    let schema = serde_json::json!({"oneOf": [
        {"type": "string", "format": "ipv4"},
        {"type": "string", "format": "ipv6"}
    ]});
    serde_json::from_value::<Schema>(schema)
        .map(RefOr::T)
        .unwrap_or_else(|_| RefOr::T(Schema::Object(string().build())))
}

fn string() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::String)
}

fn integer() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .minimum(Some(0))
}

/// `T` and every schema it refers to, by name.
fn with_refs<T: ToSchema>(out: &mut Vec<(String, RefOr<Schema>)>) {
    out.push((T::name().into_owned(), T::schema()));
    T::schemas(out);
}

/// The `GET`s of the API, in the order the document lists them.
fn gets() -> Vec<Get> {
    use Failure::{BadRequest, NotFound, TooManyRequests, Unavailable};
    let json = "application/json";
    let svg = || {
        RefOr::T(Schema::from(
            string().description(Some("An SVG image, well-formed XML")),
        ))
    };
    let png = || {
        RefOr::T(Schema::from(
            string()
                .format(Some(SchemaFormat::Custom("binary".into())))
                .description(Some("A PNG image, 1200×630")),
        ))
    };
    vec![
        Get {
            path: "/api/servers",
            id: "listServers",
            summary: "The lobby's list: every listed server, numbered (the list's epoch and seq)",
            key: false,
            range: false,
            csv: false,
            ok: (json, schema_ref::<ServerList<'static>>()),
            failures: &[TooManyRequests, Unavailable],
        },
        Get {
            path: "/api/servers/{key}",
            id: "getServer",
            summary: "One server, listed now or as last recorded",
            key: true,
            range: false,
            csv: false,
            ok: (json, schema_ref::<ServerDetails>()),
            failures: &[NotFound, TooManyRequests, Unavailable],
        },
        Get {
            path: "/api/servers/{key}/history",
            id: "getServerHistory",
            summary: "One server's players, online and open shares over a range",
            key: true,
            range: true,
            csv: true,
            ok: (json, schema_ref::<ServerHistory>()),
            failures: &[BadRequest, NotFound, TooManyRequests, Unavailable],
        },
        Get {
            path: "/api/history",
            id: "getLobbyHistory",
            summary: "The lobby's servers and players online over a range",
            key: false,
            range: true,
            csv: true,
            ok: (json, schema_ref::<LobbyHistory>()),
            failures: &[BadRequest, TooManyRequests, Unavailable],
        },
        Get {
            path: "/api/servers/{key}/week",
            id: "getServerWeek",
            summary: "One server's last 28 days folded into the 168 hours of a week (UTC, Monday 00:00 first): players, peak, open and room",
            key: true,
            range: false,
            csv: true,
            ok: (json, schema_ref::<Week>()),
            failures: &[BadRequest, NotFound, TooManyRequests, Unavailable],
        },
        Get {
            path: "/api/week",
            id: "getLobbyWeek",
            summary: "The lobby's last 28 days folded into the 168 hours of a week (UTC, Monday 00:00 first)",
            key: false,
            range: false,
            csv: true,
            ok: (json, schema_ref::<Week>()),
            failures: &[BadRequest, TooManyRequests, Unavailable],
        },
        Get {
            path: "/api/shields.json",
            id: "getLobbyShield",
            summary: "The lobby as a shields.io endpoint badge",
            key: false,
            range: false,
            csv: false,
            ok: (json, schema_ref::<Shield>()),
            failures: &[TooManyRequests],
        },
        Get {
            path: "/api/shields/{key}.json",
            id: "getServerShield",
            summary: "One server as a shields.io endpoint badge",
            key: true,
            range: false,
            csv: false,
            ok: (json, schema_ref::<Shield>()),
            failures: &[NotFound, TooManyRequests, Unavailable],
        },
        Get {
            path: "/api/push/key",
            id: "getPushKey",
            summary: "The VAPID public key a page subscribes to Web Push with",
            key: false,
            range: false,
            csv: false,
            ok: (json, schema_ref::<PushKey>()),
            failures: &[TooManyRequests, Unavailable],
        },
        Get {
            path: "/api/openapi.json",
            id: "getOpenApi",
            summary: "This document",
            key: false,
            range: false,
            csv: false,
            ok: (
                json,
                RefOr::T(Schema::from(ObjectBuilder::new().schema_type(Type::Object))),
            ),
            failures: &[TooManyRequests],
        },
        Get {
            path: "/badge.svg",
            id: "getLobbyBadge",
            summary: "The lobby's badge: servers and players online",
            key: false,
            range: false,
            csv: false,
            ok: ("image/svg+xml", svg()),
            failures: &[TooManyRequests],
        },
        Get {
            path: "/badge/{key}.svg",
            id: "getServerBadge",
            summary: "One server's badge: name, players/max, lobby open, in game or offline",
            key: true,
            range: false,
            csv: false,
            ok: ("image/svg+xml", svg()),
            failures: &[NotFound, TooManyRequests, Unavailable],
        },
        Get {
            path: "/card.png",
            id: "getLobbyCard",
            summary: "The lobby's card, 1200×630 PNG for link previews: servers and players online",
            key: false,
            range: false,
            csv: false,
            ok: ("image/png", png()),
            failures: &[TooManyRequests],
        },
        Get {
            path: "/card/{key}.png",
            id: "getServerCard",
            summary: "One server's card, 1200×630 PNG for link previews: name, players/max, lobby open, in game or offline, gameplay mode",
            key: true,
            range: false,
            csv: false,
            ok: ("image/png", png()),
            failures: &[NotFound, TooManyRequests, Unavailable],
        },
    ]
}

/// One operation with a request body or another method than `GET`: the
/// admin's webhook API (`Authorization: Bearer` with the admin token) and
/// the push subscriptions.
struct Op {
    path: &'static str,
    method: HttpMethod,
    id: &'static str,
    summary: &'static str,
    /// Whether it takes the admin token.
    admin: bool,
    /// The request's body.
    body: Option<RefOr<Schema>>,
    /// Each success's status and its body (`None`: empty).
    ok: Vec<(&'static str, &'static str, Option<RefOr<Schema>>)>,
    failures: &'static [Failure],
}

impl Op {
    fn item(self) -> PathItem {
        let mut op = OperationBuilder::new()
            .operation_id(Some(self.id))
            .summary(Some(self.summary));
        if self.admin {
            op = op.security(SecurityRequirement::new(ADMIN_TOKEN, Vec::<String>::new()));
        }
        if self.path.contains("{source}") {
            op = op.parameter(
                ParameterBuilder::new()
                    .name("source")
                    .parameter_in(ParameterIn::Path)
                    .required(Required::True)
                    .description(Some(
                        "An IP address; for IPv6, any address of the /64 (as `GET /api/admin/push` lists it)",
                    ))
                    .schema(Some(ip_address())),
            );
        }
        if self.path.contains("{id}") {
            op = op.parameter(
                ParameterBuilder::new()
                    .name("id")
                    .parameter_in(ParameterIn::Path)
                    .required(Required::True)
                    .schema(Some(string().pattern(Some("^wh_[0-9a-f]{16}$")))),
            );
        }
        if let Some(body) = self.body {
            op = op.response(
                Failure::UnsupportedMediaType.status().to_string(),
                Ref::from_response_name(Failure::UnsupportedMediaType.name()),
            );
            op = op.request_body(Some(
                RequestBodyBuilder::new()
                    .required(Some(Required::True))
                    .content(
                        "application/json",
                        ContentBuilder::new().schema(Some(body)).build(),
                    )
                    .build(),
            ));
        }
        for (status, description, answer) in self.ok {
            let mut ok = ResponseBuilder::new().description(description);
            if let Some(answer) = answer {
                ok = ok.content(
                    "application/json",
                    ContentBuilder::new().schema(Some(answer)).build(),
                );
            }
            op = op.response(status, ok.build());
        }
        for failure in self.failures {
            op = op.response(
                failure.status().to_string(),
                Ref::from_response_name(failure.name()),
            );
        }
        PathItem::new(self.method, op)
    }
}

/// The admin's webhook API (`docs/protocol.md` §2.4).
fn admin_ops() -> Vec<Op> {
    use Failure::{
        BadRequest, Conflict, NotFound, Timeout, TooLarge, TooManyRequests, Unauthorized,
        Unavailable,
    };
    let list = "/api/admin/webhooks";
    let one = "/api/admin/webhooks/{id}";
    vec![
        Op {
            admin: true,
            path: list,
            method: HttpMethod::Post,
            id: "createWebhook",
            summary: "Creates a webhook; the answer holds its secret, the only time it is shown",
            body: Some(schema_ref::<WebhookSpec>()),
            ok: vec![("201", "Created.", Some(schema_ref::<Webhook>()))],
            failures: &[
                BadRequest,
                Unauthorized,
                Timeout,
                Conflict,
                TooLarge,
                TooManyRequests,
                Unavailable,
            ],
        },
        Op {
            admin: true,
            path: list,
            method: HttpMethod::Get,
            id: "listWebhooks",
            summary: "Every webhook with its state and last deliveries",
            body: None,
            ok: vec![("200", "The webhooks.", Some(schema_ref::<WebhookList>()))],
            failures: &[Unauthorized, TooManyRequests, Unavailable],
        },
        Op {
            admin: true,
            path: one,
            method: HttpMethod::Patch,
            id: "updateWebhook",
            summary: "Enables a webhook (its failures forgotten) or disables it",
            body: Some(schema_ref::<WebhookPatch>()),
            ok: vec![(
                "200",
                "The webhook as it is now.",
                Some(schema_ref::<Webhook>()),
            )],
            failures: &[
                BadRequest,
                Unauthorized,
                NotFound,
                Timeout,
                TooLarge,
                TooManyRequests,
                Unavailable,
            ],
        },
        Op {
            admin: true,
            path: one,
            method: HttpMethod::Delete,
            id: "deleteWebhook",
            summary: "Removes a webhook; its deliveries stop before their next attempt",
            body: None,
            ok: vec![("204", "Removed.", None)],
            failures: &[Unauthorized, NotFound, TooManyRequests, Unavailable],
        },
        Op {
            admin: true,
            path: "/api/admin/webhooks/{id}/test",
            method: HttpMethod::Post,
            id: "testWebhook",
            summary: "Sends one test notification (type `test`, a made-up server) now, \
                      through the normal delivery, and answers with its outcome",
            body: None,
            ok: vec![(
                "200",
                "The attempt's outcome.",
                Some(schema_ref::<Delivery>()),
            )],
            failures: &[Unauthorized, NotFound, TooManyRequests, Unavailable],
        },
        Op {
            admin: true,
            path: "/api/admin/webhooks/preview",
            method: HttpMethod::Post,
            id: "previewStatusCard",
            summary: "The message a `\"discord-card\"` webhook of these servers would post now \
                      (the admin page's preview); nothing is sent",
            body: Some(schema_ref::<CardPreviewRequest>()),
            ok: vec![(
                "200",
                "The status card's message, as Discord would get it.",
                Some(schema_ref::<DiscordCard>()),
            )],
            failures: &[
                BadRequest,
                Unauthorized,
                Timeout,
                TooLarge,
                TooManyRequests,
                Unavailable,
            ],
        },
        Op {
            admin: true,
            path: "/api/admin/push",
            method: HttpMethod::Get,
            id: "getPushStatus",
            summary: "Whether Web Push runs (and why not), and the push subscriptions per \
                      source, the sources holding the most first",
            body: None,
            ok: vec![("200", "Web Push's state.", Some(schema_ref::<PushStatus>()))],
            failures: &[Unauthorized, TooManyRequests, Unavailable],
        },
        Op {
            admin: true,
            path: "/api/admin/push/sources/{source}",
            method: HttpMethod::Delete,
            id: "purgePushSource",
            summary: "Deletes every push subscription made from one source (an address, or \
                      an IPv6 /64)",
            body: None,
            ok: vec![("204", "Deleted.", None)],
            failures: &[
                BadRequest,
                Unauthorized,
                NotFound,
                TooManyRequests,
                Unavailable,
            ],
        },
    ]
}

/// The push subscriptions (`docs/protocol.md` §2.4): open to anyone, no
/// token.
fn push_ops() -> Vec<Op> {
    use Failure::{
        BadRequest, Forbidden, NotFound, Timeout, TooLarge, TooManyRequests, Unavailable,
    };
    let path = "/api/push/subscription";
    vec![
        Op {
            admin: false,
            path,
            method: HttpMethod::Put,
            id: "putPushSubscription",
            summary: "Creates or replaces a browser's push subscription and its watches \
                      (at most 20, each of a key the bridge has listed), which renews it: one not \
                      renewed for 30 days (`--push-expire-after`) is deleted",
            body: Some(schema_ref::<PushSubscribe>()),
            ok: vec![
                (
                    "200",
                    "Replaced: the watches as kept.",
                    Some(schema_ref::<PushWatches>()),
                ),
                (
                    "201",
                    "Created: the watches as kept.",
                    Some(schema_ref::<PushWatches>()),
                ),
            ],
            failures: &[
                BadRequest,
                Forbidden,
                Timeout,
                TooLarge,
                TooManyRequests,
                Unavailable,
            ],
        },
        Op {
            admin: false,
            path,
            method: HttpMethod::Delete,
            id: "deletePushSubscription",
            summary: "Removes a browser's push subscription (named by its endpoint and auth \
                      secret)",
            body: Some(schema_ref::<PushUnsubscribe>()),
            ok: vec![("204", "Removed.", None)],
            failures: &[
                BadRequest,
                NotFound,
                Timeout,
                TooLarge,
                TooManyRequests,
                Unavailable,
            ],
        },
    ]
}

/// The `webhooks` part: the `POST` a `"standard"` webhook receives.
fn standard_webhook() -> PathItem {
    let header = |name: &str, description: &str| {
        ParameterBuilder::new()
            .name(name)
            .parameter_in(ParameterIn::Header)
            .required(Required::True)
            .description(Some(description))
            .schema(Some(string()))
    };
    let op = OperationBuilder::new()
        .operation_id(Some("standardWebhook"))
        .summary(Some(
            "A watched server's event, as a \"standard\" webhook receives it (Standard Webhooks 1.0)",
        ))
        .parameter(header(
            "webhook-id",
            "The notification's id, the same on every retry",
        ))
        .parameter(header("webhook-timestamp", "Unix seconds"))
        .parameter(header(
            "webhook-signature",
            "`v1,` and the base64 HMAC-SHA256 of `ID.TIMESTAMP.BODY` under the webhook's secret",
        ))
        .request_body(Some(
            RequestBodyBuilder::new()
                .required(Some(Required::True))
                .content("application/json", json_of::<WebhookPayload>())
                .build(),
        ))
        .response(
            "2XX",
            ResponseBuilder::new()
                .description("Delivered. 429 and 5xx are retried; anything else fails.")
                .build(),
        );
    PathItem::new(HttpMethod::Post, op)
}

/// The document, as the bridge serves it.
pub fn document() -> Value {
    let mut paths = PathsBuilder::new();
    for get in gets() {
        paths = paths.path(get.path, get.item());
    }
    for op in admin_ops().into_iter().chain(push_ops()) {
        paths = paths.path(op.path, op.item());
    }
    let mut schemas = Vec::new();
    with_refs::<ServerList<'static>>(&mut schemas);
    with_refs::<ServerDetails>(&mut schemas);
    with_refs::<ServerHistory>(&mut schemas);
    with_refs::<LobbyHistory>(&mut schemas);
    with_refs::<Week>(&mut schemas);
    with_refs::<Shield>(&mut schemas);
    with_refs::<ApiError>(&mut schemas);
    with_refs::<WebhookPayload>(&mut schemas);
    with_refs::<WebhookSpec>(&mut schemas);
    with_refs::<WebhookPatch>(&mut schemas);
    with_refs::<CardPreviewRequest>(&mut schemas);
    with_refs::<DiscordCard>(&mut schemas);
    with_refs::<Webhook>(&mut schemas);
    with_refs::<WebhookList>(&mut schemas);
    with_refs::<PushKey>(&mut schemas);
    with_refs::<PushStatus>(&mut schemas);
    with_refs::<PushWatches>(&mut schemas);
    with_refs::<PushSubscribe>(&mut schemas);
    with_refs::<PushUnsubscribe>(&mut schemas);
    with_refs::<ServerKey>(&mut schemas);
    with_refs::<HistoryRange>(&mut schemas);
    let mut components = ComponentsBuilder::new().schemas_from_iter(schemas);
    for failure in Failure::ALL {
        components = components.response(failure.name(), failure.response());
    }
    let components = components.security_scheme(
        ADMIN_TOKEN,
        SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)),
    );
    let info = InfoBuilder::new()
        .title("Lobby bridge API")
        .version(env!("CARGO_PKG_VERSION"))
        .description(Some(
            "What a lobby bridge answers over HTTP: the server list, each server's details \
             and history, the lobby's history, badges (SVG and shields.io), cards (PNG), Web Push \
             subscriptions, the admin's webhook API (the admin token as a bearer token) and \
             the webhooks it sends. \
             Every public answer carries `ETag` and `Access-Control-Allow-Origin: *` (the \
             admin's answers neither: they are `no-store` and for the bridge's own page); \
             every path is paid for from the client address's request budget (429 beyond \
             it). A path under `/api/` that is not described here answers 404, and a method \
             other than those described (or OPTIONS on a public path) 405, both with an \
             `ApiError` body.",
        ))
        .build();
    let api = OpenApiBuilder::new()
        .info(info)
        .paths(paths.build())
        .components(Some(components.build()))
        .build();
    let mut doc = match serde_json::to_value(&api) {
        Ok(doc) => doc,
        // utoipa's types are plain data with string keys.
        Err(e) => panic!("the OpenAPI document failed to serialise (a bug): {e}"),
    };
    if let Some(schemas) = doc.pointer_mut("/components/schemas") {
        close_objects(schemas);
        constrain(schemas);
    }
    if let Value::Object(root) = &mut doc {
        let webhook = serde_json::to_value(standard_webhook()).unwrap_or(Value::Null);
        root.insert(
            "webhooks".into(),
            serde_json::json!({ "serverEvent": webhook }),
        );
    }
    doc
}

/// What the requests' validation (`watch`, `push`) requires beyond the
/// fields' own schemas, written where utoipa has no builder for it: a
/// `threshold` with `players-reached` and only with it (`null` counts as
/// absent), a push endpoint that is an http(s) URL of at most
/// [`MAX_ENDPOINT_LEN`](crate::push::MAX_ENDPOINT_LEN) bytes, the
/// subscription keys' exact base64url lengths, the watches' bounds.
fn constrain(schemas: &mut Value) {
    use serde_json::json;
    let threshold_coupling = || {
        json!({
            "if": {
                "required": ["events"],
                "properties": { "events": { "contains": { "const": "players-reached" } } }
            },
            "then": {
                "required": ["threshold"],
                "properties": { "threshold": { "type": "integer" } }
            },
            "else": { "properties": { "threshold": { "type": "null" } } }
        })
    };
    let nullable_threshold = |object: &mut Value| {
        if let Some(t) = object.pointer_mut("/properties/threshold") {
            t["type"] = json!(["integer", "null"]);
        }
    };
    let merge = |target: &mut Value, extra: Value| {
        if let (Value::Object(target), Value::Object(extra)) = (target, extra) {
            target.extend(extra);
        }
    };
    // A URL as `watch::url_named` reads it: http or https (any case), a
    // host, no fragment, no user, no white space or control characters.
    let url = |max: usize| {
        json!({
            "type": "string",
            "format": "uri",
            "minLength": 8,
            "maxLength": max,
            "pattern": r"^[Hh][Tt][Tt][Pp][Ss]?://[^/?#@\\\s\x00-\x1f\x7f]+([/?\\][^#\s\x00-\x1f\x7f]*)?$"
        })
    };
    if let Some(spec) = schemas.get_mut("WebhookSpec") {
        nullable_threshold(spec);
        merge(spec, threshold_coupling());
        // `events` is required except by a status card, which takes no
        // `events`, `threshold` or `cooldown`.
        merge(
            spec,
            json!({
                "allOf": [{
                    "if": {
                        "required": ["format"],
                        "properties": { "format": { "const": "discord-card" } }
                    },
                    "then": {
                        "not": {
                            "anyOf": [
                                { "required": ["events"] },
                                { "required": ["threshold"] },
                                { "required": ["cooldown"] }
                            ]
                        }
                    },
                    "else": { "required": ["events"] }
                }]
            }),
        );
        if let Some(u) = spec.pointer_mut("/properties/url") {
            let description = u["description"].clone();
            *u = url(crate::watch::MAX_URL_LEN);
            u["description"] = description;
        }
    }
    if let Some(watch) = schemas.get_mut("PushWatch") {
        nullable_threshold(watch);
        merge(watch, threshold_coupling());
        if let Some(events) = watch.pointer_mut("/properties/events") {
            merge(
                events,
                json!({ "minItems": 1, "maxItems": crate::watch::Event::ALL.len(), "uniqueItems": true }),
            );
        }
        if let Some(t) = watch.pointer_mut("/properties/threshold") {
            merge(
                t,
                json!({ "minimum": 1, "maximum": crate::watch::MAX_THRESHOLD }),
            );
        }
    }
    if let Some(watches) = schemas.pointer_mut("/PushSubscribe/properties/watches") {
        merge(watches, json!({ "maxItems": crate::push::MAX_WATCHES }));
    }
    if let Some(endpoint) = schemas.pointer_mut("/SubscriptionOnWire/properties/endpoint") {
        let description = endpoint["description"].clone();
        *endpoint = url(crate::push::MAX_ENDPOINT_LEN);
        endpoint["description"] = description;
    }
    // Base64url of exactly 65 and 16 bytes: the last character carries
    // the last bits and zeros; padding is taken and ignored.
    if let Some(keys) = schemas.pointer_mut("/SubscriptionKeys/properties") {
        merge(
            &mut keys["p256dh"],
            json!({ "pattern": "^[A-Za-z0-9_-]{86}[AEIMQUYcgkosw048]=*$", "maxLength": 130 }),
        );
        merge(
            &mut keys["auth"],
            json!({ "pattern": "^[A-Za-z0-9_-]{21}[AQgw]=*$", "maxLength": 32 }),
        );
    }
}

/// Marks every object schema with properties, at any depth, as closed:
/// our answers' types have no open-ended fields.
fn close_objects(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            if map.contains_key("properties") && !map.contains_key("additionalProperties") {
                map.insert("additionalProperties".into(), Value::Bool(false));
            }
            map.values_mut().for_each(close_objects);
        }
        Value::Array(items) => items.iter_mut().for_each(close_objects),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reference_resolves_and_every_object_is_closed() {
        let doc = document();
        assert_eq!(doc["openapi"], "3.1.0");
        let text = doc.to_string();
        let mut rest = text.as_str();
        let mut refs = 0;
        while let Some(at) = rest.find("\"$ref\":\"#/") {
            rest = &rest[at + 9..];
            let end = rest.find('"').expect("a closed string");
            let pointer = &rest[..end];
            assert!(
                doc.pointer(pointer).is_some(),
                "{pointer} is not in the document"
            );
            refs += 1;
        }
        assert!(refs > 10, "only {refs} references");
        for (name, schema) in doc["components"]["schemas"].as_object().unwrap() {
            if schema.get("properties").is_some() {
                assert_eq!(schema["additionalProperties"], false, "{name}");
            }
        }
        assert!(doc["webhooks"]["serverEvent"]["post"]["requestBody"].is_object());
        for failure in Failure::ALL {
            assert!(doc["components"]["responses"][failure.name()].is_object());
        }
    }
}
