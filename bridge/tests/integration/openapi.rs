//! The described API (`docs/protocol.md` §2.5) against the real bridge:
//! `GET /api/openapi.json` is served like every answer (ETag, CORS, 304),
//! and every real answer of the bridge — the list, a server listed and one
//! offline, both histories, the shields.io badges, the SVG badges, the
//! PNG cards, the 404s, the 400 of a bad range, the 429 of a spent budget, a 404 for an
//! unknown `/api` path and a 405 for a wrong method, the admin's webhook
//! API (each operation, its 201/200/204 and its 400, 401 and 404, and
//! the status card's preview) and the
//! push API (the key, and `PUT`/`DELETE` of a subscription with their
//! 400, 403, 404 and 413) — validates against the schema the document
//! gives for that path, method and status. The schemas
//! are closed, so an answer with one more field fails here until its type,
//! and with it the document, says so. Every path of the document is
//! exercised.

use crate::common;

use std::{
    collections::BTreeSet,
    net::{IpAddr, Ipv4Addr},
    path::Path,
    time::Duration,
};

use common::*;
use serde_json::{json, Value};

/// A second client address (loopback), for the budget's 429.
const OTHER: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));

fn config(master: &TestMaster, dir: &Path) -> bridge::Config {
    let mut c = test_config(master.addr);
    c.data_dir = Some(dir.to_owned());
    c.history_interval = Duration::from_secs(1);
    // The admin's webhook is aimed at a closed port on loopback.
    c.webhook_allow_private = true;
    // A push endpoint on loopback (nothing is ever sent to it here).
    c.push_allow_insecure = true;
    c.push_contact = Some("mailto:ops@lobby.example".into());
    // Servers' details carry their Join links (`joinUrl`).
    c.join_url = Some("bomber://{address}:{port}".parse().unwrap());
    c
}

/// A header's value in a raw head (names compared without case).
fn header<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    head.lines().skip(1).find_map(|line| {
        let (n, v) = line.split_once(':')?;
        n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// The served document, and the validators it gives.
struct Described {
    doc: Value,
    /// The document's paths that a checked answer came from.
    seen: BTreeSet<String>,
}

impl Described {
    /// The response object of `template`'s `GET` for `status`, references
    /// followed.
    fn response(&self, template: &str, status: u16) -> &Value {
        self.response_to("get", template, status)
    }

    /// The response object of `template`'s `method` (lowercase) for
    /// `status`, references followed.
    fn response_to(&self, method: &str, template: &str, status: u16) -> &Value {
        let op = &self.doc["paths"][template][method];
        assert!(op.is_object(), "the document has no {method} {template}");
        let response = &op["responses"][status.to_string()];
        assert!(
            response.is_object(),
            "the document gives {method} {template} no {status}"
        );
        self.follow(response)
    }

    fn follow<'a>(&'a self, v: &'a Value) -> &'a Value {
        match v.get("$ref").and_then(Value::as_str) {
            Some(pointer) => self
                .doc
                .pointer(pointer.trim_start_matches('#'))
                .unwrap_or_else(|| panic!("{pointer} is not in the document")),
            None => v,
        }
    }

    /// A validator for `schema`, a schema of the document (its references
    /// into `#/components` resolve against the document's components).
    fn validator(&self, schema: &Value) -> jsonschema::Validator {
        let mut root = schema.clone();
        if let Value::Object(map) = &mut root {
            map.insert("components".into(), self.doc["components"].clone());
        } else {
            panic!("a schema that is not an object: {schema}");
        }
        jsonschema::draft202012::new(&root)
            .unwrap_or_else(|e| panic!("the document's schema does not compile: {e}"))
    }

    /// Checks one real answer (`status`, `head`, `body`) of the path
    /// `template` names against the document: its media type, its headers
    /// and, for JSON, its body.
    fn check(&mut self, template: &str, answer: &(u16, String, Vec<u8>)) {
        self.check_to("get", template, answer)
    }

    /// [`Described::check`] for `method` (lowercase).
    fn check_to(
        &mut self,
        method: &str,
        template: &str,
        (status, head, body): &(u16, String, Vec<u8>),
    ) {
        let response = self.response_to(method, template, *status).clone();
        self.seen.insert(template.to_owned());
        if let Some(headers) = response["headers"].as_object() {
            for name in headers.keys() {
                assert!(
                    header(head, name).is_some(),
                    "{template} {status} lacks {name}: {head}"
                );
            }
        }
        let Some(content) = response["content"].as_object() else {
            assert!(body.is_empty(), "{template} {status} has a body");
            return;
        };
        let media = header(head, "content-type").expect("a content type");
        let (_, described) = content
            .iter()
            .find(|(m, _)| media.starts_with(m.as_str()))
            .unwrap_or_else(|| panic!("{template} {status}: {media} is not described"));
        if !media.starts_with("application/json") {
            return;
        }
        let value: Value = serde_json::from_slice(body).expect("a JSON body");
        self.assert_valid(&described["schema"], &value, template, *status);
    }

    /// `value` validates against `schema`.
    fn assert_valid(&self, schema: &Value, value: &Value, template: &str, status: u16) {
        let errors: Vec<String> = self
            .validator(schema)
            .iter_errors(value)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "{template} {status} does not match the document: {errors:?}\n{value}"
        );
    }

    /// The error body's schema.
    fn error_schema(&self) -> Value {
        json!({ "$ref": "#/components/schemas/ApiError" })
    }
}

#[tokio::test]
async fn every_answer_matches_the_served_document() {
    let master = TestMaster::start().await;
    let dir = tempfile::tempdir().unwrap();
    let bridge = TestBridge::embedding(&master, config(&master, dir.path())).await;
    let here = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let get = |path: String| async move { http_request(here, bridge.addr, "GET", &path, "").await };

    // The document: served with ETag and CORS, revalidated with 304.
    let served = get("/api/openapi.json".into()).await;
    assert_eq!(served.0, 200);
    assert_eq!(header(&served.1, "access-control-allow-origin"), Some("*"));
    let etag = header(&served.1, "etag").expect("an ETag").to_owned();
    let again = http_request(
        here,
        bridge.addr,
        "GET",
        "/api/openapi.json",
        &format!("If-None-Match: {etag}\r\n"),
    )
    .await;
    assert_eq!(again.0, 304);
    let doc: Value = serde_json::from_slice(&served.2).expect("JSON");
    assert_eq!(doc["openapi"], "3.1.0");
    assert!(doc["webhooks"]["serverEvent"]["post"].is_object());
    assert_eq!(
        doc["components"]["schemas"]["ServerDetails"]["properties"]["joinUrl"]["type"],
        json!(["string", "null"]),
        "{}",
        doc["components"]["schemas"]["ServerDetails"]
    );
    for (name, schema) in doc["components"]["schemas"].as_object().unwrap() {
        if let Err(e) = jsonschema::meta::validate(schema) {
            panic!("the schema {name} is not JSON Schema 2020-12: {e}");
        }
    }
    let mut d = Described {
        doc,
        seen: BTreeSet::new(),
    };
    d.check("/api/openapi.json", &served);
    d.check("/api/openapi.json", &again);

    // A listed server and one that left, with history.
    let alpha = game_server(master.addr, "Alpha", 20001).await;
    let beta = game_server(master.addr, "Beta", 20002).await;
    wait_registered(&master, 2).await;
    let listed = until_json(&bridge, "/api/servers", |status, _, v| {
        status == 200 && v["servers"].as_array().is_some_and(|s| s.len() == 2)
    })
    .await;
    let keys: Vec<String> = listed["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["key"].as_str().unwrap().to_owned())
        .collect();
    let (alpha_key, beta_key) = (&keys[0], &keys[1]);
    let history = format!("/api/servers/{alpha_key}/history?range=1h");
    until_json(&bridge, &history, |_, _, v| {
        v["points"].as_array().is_some_and(|p| !p.is_empty())
    })
    .await;
    // Beta is recorded before it leaves: a server gone before the first
    // sample that listed it was never recorded, and its key is a 404
    // (a sample may have been taken between Alpha's listing and Beta's).
    until_json(
        &bridge,
        &format!("/api/servers/{beta_key}/history?range=1h"),
        |status, _, _| status == 200,
    )
    .await;
    drop(beta);
    wait_registered(&master, 1).await;
    until_json(&bridge, &format!("/api/servers/{beta_key}"), |_, _, v| {
        v["online"] == false
    })
    .await;

    let answers: Vec<(&str, String, u16)> = vec![
        ("/api/servers", "/api/servers".into(), 200),
        (
            "/api/servers/{key}",
            format!("/api/servers/{alpha_key}"),
            200,
        ),
        (
            "/api/servers/{key}",
            format!("/api/servers/{beta_key}"),
            200,
        ),
        (
            "/api/servers/{key}",
            "/api/servers/0000000000000000".into(),
            404,
        ),
        ("/api/servers/{key}", "/api/servers/not-a-key".into(), 404),
        ("/api/servers/{key}/history", history.clone(), 200),
        (
            "/api/servers/{key}/history",
            format!("/api/servers/{beta_key}/history?range=24h"),
            200,
        ),
        (
            "/api/servers/{key}/history",
            format!("/api/servers/{alpha_key}/history?range=2h"),
            400,
        ),
        (
            "/api/servers/{key}/history",
            "/api/servers/0000000000000000/history?range=1h".into(),
            404,
        ),
        ("/api/history", "/api/history?range=24h".into(), 200),
        ("/api/history", "/api/history?range=1y".into(), 200),
        ("/api/history", "/api/history?range=soon".into(), 400),
        ("/api/history", "/api/history?range=90d".into(), 200),
        (
            "/api/history",
            "/api/history?range=24h&format=csv".into(),
            200,
        ),
        (
            "/api/history",
            "/api/history?range=24h&format=xml".into(),
            400,
        ),
        (
            "/api/servers/{key}/history",
            format!("/api/servers/{alpha_key}/history?range=90d&format=csv"),
            200,
        ),
        (
            "/api/servers/{key}/week",
            format!("/api/servers/{alpha_key}/week"),
            200,
        ),
        (
            "/api/servers/{key}/week",
            format!("/api/servers/{alpha_key}/week?format=csv"),
            200,
        ),
        (
            "/api/servers/{key}/week",
            format!("/api/servers/{alpha_key}/week?format=pdf"),
            400,
        ),
        (
            "/api/servers/{key}/week",
            "/api/servers/0000000000000000/week".into(),
            404,
        ),
        ("/api/week", "/api/week".into(), 200),
        ("/api/week", "/api/week?format=csv".into(), 200),
        ("/api/shields.json", "/api/shields.json".into(), 200),
        (
            "/api/shields/{key}.json",
            format!("/api/shields/{alpha_key}.json"),
            200,
        ),
        (
            "/api/shields/{key}.json",
            format!("/api/shields/{beta_key}.json"),
            200,
        ),
        (
            "/api/shields/{key}.json",
            "/api/shields/0000000000000000.json".into(),
            404,
        ),
        ("/api/push/key", "/api/push/key".into(), 200),
        ("/badge.svg", "/badge.svg".into(), 200),
        ("/badge/{key}.svg", format!("/badge/{alpha_key}.svg"), 200),
        (
            "/badge/{key}.svg",
            "/badge/0000000000000000.svg".into(),
            404,
        ),
        ("/card.png", "/card.png".into(), 200),
        ("/card/{key}.png", format!("/card/{alpha_key}.png"), 200),
        ("/card/{key}.png", "/card/0000000000000000.png".into(), 404),
    ];
    for (template, path, status) in &answers {
        let answer = get(path.clone()).await;
        assert_eq!(
            answer.0,
            *status,
            "{path}: {}",
            String::from_utf8_lossy(&answer.2)
        );
        assert_eq!(
            header(&answer.1, "access-control-allow-origin"),
            Some("*"),
            "{path}"
        );
        d.check(template, &answer);
        if *status == 200 {
            let tag = header(&answer.1, "etag").expect("an ETag").to_owned();
            let again = http_request(
                here,
                bridge.addr,
                "GET",
                path,
                &format!("If-None-Match: {tag}\r\n"),
            )
            .await;
            assert_eq!(again.0, 304, "{path}");
            d.check(template, &again);
        }
    }

    // The push API's writes.
    push_answers(&mut d, &bridge, alpha_key).await;

    // What the answers say, beyond their shapes.
    let (_, _, body) = get(format!("/api/shields/{beta_key}.json")).await;
    let shield: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        (&shield["label"], &shield["message"], &shield["color"]),
        (&json!("Beta"), &json!("offline"), &json!("lightgrey"))
    );
    let (_, _, body) = get(format!("/api/shields/{alpha_key}.json")).await;
    let shield: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(shield["message"], "0/4 open");
    assert_eq!(shield["schemaVersion"], 1);
    let (_, _, body) = get("/api/shields.json".into()).await;
    let shield: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(shield["message"], "1 servers, 0 players");

    // Not the page: unknown API paths are 404, wrong methods 405, as JSON.
    let error = d.error_schema();
    for path in [
        "/api/nope",
        "/api/servers/0000000000000000/nope",
        "/api",
        "/api/",
    ] {
        let (status, head, body) = get(path.into()).await;
        assert_eq!(status, 404, "{path}");
        assert!(header(&head, "content-type").is_some_and(|t| t.starts_with("application/json")));
        d.assert_valid(&error, &serde_json::from_slice(&body).unwrap(), path, 404);
    }
    for (method, path) in [
        ("POST", "/api/servers".to_owned()),
        ("DELETE", format!("/api/servers/{alpha_key}")),
        ("PUT", "/api/shields.json".to_owned()),
        ("POST", "/badge.svg".to_owned()),
        ("POST", "/card.png".to_owned()),
    ] {
        let (status, head, body) = http_request(here, bridge.addr, method, &path, "").await;
        assert_eq!(status, 405, "{method} {path}");
        assert!(header(&head, "allow").is_some(), "{method} {path}: {head}");
        d.assert_valid(&error, &serde_json::from_slice(&body).unwrap(), &path, 405);
    }

    // The admin's webhook API: every operation, its successes and
    // refusals, as the document describes them.
    let admin = |method: &'static str, path: String, token: bool, body: Value| async move {
        let auth = if token {
            format!("Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n")
        } else {
            String::new()
        };
        let body = if body.is_null() {
            String::new()
        } else {
            body.to_string()
        };
        http_send(here, bridge.addr, method, &path, &auth, &body).await
    };
    let list = "/api/admin/webhooks";
    let one = "/api/admin/webhooks/{id}";
    let test = "/api/admin/webhooks/{id}/test";
    let request = json!({
        "url": "http://127.0.0.1:1/hook",
        "format": "standard",
        "events": ["lobby-opened", "players-reached"],
        "servers": {"keys": [alpha_key]},
        "threshold": 3,
    });
    let refused = admin("POST", list.into(), false, request.clone()).await;
    assert_eq!(refused.0, 401);
    d.check_to("post", list, &refused);
    let bad = admin(
        "POST",
        list.into(),
        true,
        json!({"url": "http://127.0.0.1:1/"}),
    )
    .await;
    assert_eq!(bad.0, 400);
    let v: Value = serde_json::from_slice(&bad.2).unwrap();
    assert_eq!(v["field"], "format", "{v}");
    d.check_to("post", list, &bad);
    let created = admin("POST", list.into(), true, request).await;
    assert_eq!(created.0, 201, "{}", String::from_utf8_lossy(&created.2));
    d.check_to("post", list, &created);
    let v: Value = serde_json::from_slice(&created.2).unwrap();
    let id = v["id"].as_str().unwrap().to_owned();
    assert!(v["secret"].as_str().unwrap().starts_with("whsec_"));
    let tested = admin("POST", format!("{list}/{id}/test"), true, Value::Null).await;
    assert_eq!(tested.0, 200);
    d.check_to("post", test, &tested);
    let v: Value = serde_json::from_slice(&tested.2).unwrap();
    assert_eq!((&v["event"], &v["ok"]), (&json!("test"), &json!(false)));
    let listed = admin("GET", list.into(), true, Value::Null).await;
    assert_eq!(listed.0, 200);
    d.check_to("get", list, &listed);
    let v: Value = serde_json::from_slice(&listed.2).unwrap();
    assert_eq!(v["webhooks"][0]["lastDeliveries"][0]["event"], "test");
    assert!(v["webhooks"][0].get("secret").is_none(), "shown once");
    d.check_to(
        "get",
        list,
        &admin("GET", list.into(), false, Value::Null).await,
    );
    // The status card's preview: its message, a refused filter. (Its
    // 401 is every admin operation's; one more wrong token here would
    // spend the address's allowance the push API's checks need.)
    let preview = "/api/admin/webhooks/preview";
    for (body, code) in [
        (json!({"servers": {"keys": [alpha_key]}}), 200),
        (json!({"servers": {"keys": []}}), 400),
    ] {
        let answer = admin("POST", preview.into(), true, body).await;
        assert_eq!(answer.0, code, "{}", String::from_utf8_lossy(&answer.2));
        d.check_to("post", preview, &answer);
    }
    let patched = admin(
        "PATCH",
        format!("{list}/{id}"),
        true,
        json!({"enabled": false}),
    )
    .await;
    assert_eq!(patched.0, 200);
    d.check_to("patch", one, &patched);
    let bad = admin("PATCH", format!("{list}/{id}"), true, json!({"enabled": 1})).await;
    assert_eq!(bad.0, 400);
    d.check_to("patch", one, &bad);
    let gone = format!("{list}/wh_0000000000000000");
    let missing = admin("PATCH", gone.clone(), true, json!({"enabled": true})).await;
    assert_eq!(missing.0, 404);
    d.check_to("patch", one, &missing);
    let missing = admin("POST", format!("{gone}/test"), true, Value::Null).await;
    assert_eq!(missing.0, 404);
    d.check_to("post", test, &missing);
    let deleted = admin("DELETE", format!("{list}/{id}"), true, Value::Null).await;
    assert_eq!(deleted.0, 204);
    d.check_to("delete", one, &deleted);
    let again = admin("DELETE", format!("{list}/{id}"), true, Value::Null).await;
    assert_eq!(again.0, 404);
    d.check_to("delete", one, &again);

    // The admin's push API: the status, and purging a source (this
    // test's address holds one subscription).
    let status = "/api/admin/push";
    let source = "/api/admin/push/sources/{source}";
    let made = http_send(
        here,
        bridge.addr,
        "PUT",
        "/api/push/subscription",
        "",
        &json!({"subscription": subscription("http://127.0.0.1:9/push/b"), "watches": []})
            .to_string(),
    )
    .await;
    assert_eq!(made.0, 201, "{}", String::from_utf8_lossy(&made.2));
    let shown = admin("GET", status.into(), true, Value::Null).await;
    assert_eq!(shown.0, 200);
    d.check_to("get", status, &shown);
    let v: Value = serde_json::from_slice(&shown.2).unwrap();
    assert_eq!(v["sources"][0]["source"], "127.0.0.1", "{v}");
    d.check_to(
        "get",
        status,
        &admin("GET", status.into(), false, Value::Null).await,
    );
    let purge = "/api/admin/push/sources/127.0.0.1".to_owned();
    for (token, path, code) in [
        (false, purge.clone(), 401),
        (true, purge.clone(), 204),
        (true, purge, 404),
        (true, "/api/admin/push/sources/nobody".into(), 400),
    ] {
        let answer = admin("DELETE", path, token, Value::Null).await;
        assert_eq!(answer.0, code, "{}", String::from_utf8_lossy(&answer.2));
        d.check_to("delete", source, &answer);
    }

    // A closed schema: the same answer with one more field fails.
    let (_, _, body) = get(format!("/api/servers/{alpha_key}")).await;
    let mut grown: Value = serde_json::from_slice(&body).unwrap();
    grown["extra"] = json!(1);
    let schema =
        d.response("/api/servers/{key}", 200)["content"]["application/json"]["schema"].clone();
    assert!(
        !d.validator(&schema).is_valid(&grown),
        "a field the document does not name passed: the schemas are not closed"
    );

    drop(alpha);
    bridge.shutdown().await;

    // A spent budget: 429 with Retry-After, from a second address, on a
    // bridge that allows one answer per address and second.
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(&master, dir.path());
    c.api_rate_per_sec = 1;
    c.api_burst = 1;
    let small = TestBridge::embedding(&master, c).await;
    let mut statuses = Vec::new();
    for _ in 0..3 {
        let answer = http_request(OTHER, small.addr, "GET", "/api/shields.json", "").await;
        statuses.push(answer.0);
        d.check("/api/shields.json", &answer);
    }
    assert_eq!(statuses[0], 200);
    assert!(
        statuses[1..].contains(&429),
        "the budget never ran out: {statuses:?}"
    );
    // Every new surface is charged before any work: random keys of the
    // shields and the weeks, unknown paths and wrong methods from one address get 429s
    // once its budget is spent (nothing computed, nothing cached).
    // One token a second refills: at most one answer per second of the
    // loop is anything but 429.
    let started = std::time::Instant::now();
    let mut answered = 0;
    for n in 0..200u64 {
        let (method, path) = match n % 4 {
            0 => ("GET", format!("/api/shields/{n:016x}.json")),
            1 => ("GET", format!("/api/nope/{n}")),
            2 => ("GET", format!("/api/servers/{n:016x}/week?format=csv")),
            _ => ("POST", "/api/shields.json".to_owned()),
        };
        let answer = http_request(OTHER, small.addr, method, &path, "").await;
        if answer.0 != 429 {
            assert!(
                matches!(answer.0, 404 | 405),
                "{method} {path}: {}",
                answer.0
            );
            answered += 1;
        }
    }
    let allowed = started.elapsed().as_secs() + 1;
    assert!(
        answered <= allowed,
        "{answered} uncharged answers in {:?}",
        started.elapsed()
    );
    // The other address's spending leaves this one's budget whole.
    assert_eq!(
        http_request(here, small.addr, "GET", "/api/openapi.json", "")
            .await
            .0,
        200
    );
    small.shutdown().await;

    let described: BTreeSet<String> = d.doc["paths"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(d.seen, described, "every described path is checked");
    master.shutdown().await;
}

/// A browser's subscription as `PushSubscription.toJSON()` writes it, on
/// a loopback endpoint, with a fresh key pair and `auth`.
fn subscription(endpoint: &str) -> Value {
    use base64::{engine::general_purpose::URL_SAFE_NO_PAD as B64URL, Engine as _};
    use p256::elliptic_curve::sec1::ToEncodedPoint;
    let secret = loop {
        let mut raw = [0u8; 32];
        getrandom::fill(&mut raw).unwrap();
        if let Ok(k) = p256::SecretKey::from_slice(&raw) {
            break k;
        }
    };
    let mut auth = [0u8; 16];
    getrandom::fill(&mut auth).unwrap();
    json!({"endpoint": endpoint, "expirationTime": null, "keys": {
        "p256dh": B64URL.encode(secret.public_key().to_encoded_point(false).as_bytes()),
        "auth": B64URL.encode(auth)}})
}

/// `PUT` and `DELETE /api/push/subscription`: created, replaced, refused
/// (400, 403, 413), removed and not found, each checked against the
/// document.
async fn push_answers(d: &mut Described, bridge: &TestBridge, key: &str) {
    let http = http_client(None);
    let url = format!("http://{}/api/push/subscription", bridge.addr);
    let send = |method: &'static str, body: String| {
        let req = http.request(method.parse().unwrap(), &url).body(body);
        async move {
            let resp = req.send().await.unwrap();
            let mut head = format!("HTTP/1.1 {}\r\n", resp.status().as_u16());
            for (name, value) in resp.headers() {
                head.push_str(&format!("{name}: {}\r\n", value.to_str().unwrap()));
            }
            let status = resp.status().as_u16();
            (status, head, resp.bytes().await.unwrap().to_vec())
        }
    };
    let sub = subscription("http://127.0.0.1:9/push/a");
    let watches =
        json!([{"key": key, "events": ["lobby-opened", "players-reached"], "threshold": 2}]);
    let put = json!({"subscription": sub, "watches": watches}).to_string();
    let other = json!({"subscription": subscription("http://127.0.0.1:9/push/a"), "watches": []});
    let bad = json!({"subscription": sub, "watches": [{"key": key, "events": []}]}).to_string();
    for (method, body, status) in [
        ("PUT", put.clone(), 201),
        ("PUT", put, 200),
        ("PUT", bad, 400),
        ("PUT", other.to_string(), 403),
        ("PUT", "x".repeat(9000), 413),
        (
            "DELETE",
            json!({"subscription": other["subscription"]}).to_string(),
            404,
        ),
        ("DELETE", json!({"subscription": sub}).to_string(), 204),
        ("DELETE", "[]".into(), 400),
    ] {
        let answer = send(method, body).await;
        assert_eq!(
            answer.0,
            status,
            "{method}: {}",
            String::from_utf8_lossy(&answer.2)
        );
        d.check_to(&method.to_lowercase(), "/api/push/subscription", &answer);
    }
}

/// Every refusal under `/api/` and of a badge is the documented JSON
/// error body, whatever refused: a handler, an extractor (a query
/// parameter given twice, a path parameter that is not UTF-8), the
/// framework (a method a path does not take) or the API's net (a body
/// declared as something else than JSON); and a path segment no file can have is a 404 of the
/// file server, not a 500.
#[tokio::test]
async fn every_refusal_is_the_documented_json() {
    let master = TestMaster::start().await;
    let dir = tempfile::tempdir().unwrap();
    let dist = tempfile::tempdir().unwrap();
    std::fs::write(dist.path().join("index.html"), "<!doctype html>").unwrap();
    let mut c = config(&master, dir.path());
    c.static_dir = dist.path().to_owned();
    let bridge = TestBridge::embedding(&master, c).await;
    let here = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let served = http_request(here, bridge.addr, "GET", "/api/openapi.json", "").await;
    let d = Described {
        doc: serde_json::from_slice(&served.2).unwrap(),
        seen: BTreeSet::new(),
    };
    let auth = format!("Authorization: Bearer {TOKEN}\r\n");
    let key = "0123456789abcdef";
    let long = "a".repeat(300);
    let cases: Vec<(&str, String, String, &str, u16, &str)> = vec![
        (
            "GET",
            "/api/history?range=1h&range=1h".into(),
            String::new(),
            "",
            400,
            "duplicate field `range`",
        ),
        (
            "GET",
            format!("/api/servers/{key}/history?range=1h&range=24h"),
            String::new(),
            "",
            400,
            "duplicate",
        ),
        (
            "GET",
            "/api/history?range=2h".into(),
            String::new(),
            "",
            400,
            "range must be",
        ),
        (
            "GET",
            "/api/servers/%FF%FE".into(),
            String::new(),
            "",
            404,
            "no such path",
        ),
        (
            "GET",
            "/badge/%FF.svg".into(),
            String::new(),
            "",
            404,
            "no such path",
        ),
        (
            "GET",
            "/card/%FF.png".into(),
            String::new(),
            "",
            404,
            "no such path",
        ),
        (
            "GET",
            format!("/api/{long}"),
            String::new(),
            "",
            404,
            "no such API path",
        ),
        (
            "PUT",
            "/api/admin/webhooks".into(),
            auth.clone(),
            "",
            405,
            "method",
        ),
        (
            "DELETE",
            "/badge.svg".into(),
            String::new(),
            "",
            405,
            "method",
        ),
        (
            "POST",
            "/api/admin/webhooks".into(),
            format!("{auth}Content-Type: application/x-www-form-urlencoded\r\n"),
            "url=http://127.0.0.1:9/",
            415,
            "application/json",
        ),
        (
            "PUT",
            "/api/push/subscription".into(),
            "Content-Type: text/plain\r\n".into(),
            "{}",
            415,
            "application/json",
        ),
    ];
    for (method, path, extra, body, status, says) in cases {
        let (got, head, bytes) = http_send(here, bridge.addr, method, &path, &extra, body).await;
        let shown = &path[..path.len().min(60)];
        assert_eq!(got, status, "{method} {shown}: {head}");
        assert_eq!(
            header(&head, "content-type"),
            Some("application/json"),
            "{method} {shown}: {head}"
        );
        let value: Value = serde_json::from_slice(&bytes).expect("a JSON body");
        d.assert_valid(&d.error_schema(), &value, &path, status);
        let error = value["error"].as_str().unwrap();
        assert!(error.contains(says), "{method} {shown}: {error}");
        if status == 405 {
            assert!(header(&head, "allow").is_some(), "{method} {shown}: {head}");
        }
        // A public path's refusal is readable by any page, the admin's not.
        assert_eq!(
            header(&head, "access-control-allow-origin").is_some(),
            !path.starts_with("/api/admin/"),
            "{method} {shown}: {head}"
        );
    }
    // Outside the API, the file server's: a 404, not its 500.
    let (status, head, _) = http_get(bridge.addr, &format!("/{long}"), "").await;
    assert_eq!(status, 404, "{head}");
    // A route of the page, for a key never seen: the page's 404.
    let (status, head, _) = http_get(bridge.addr, "/server/0123456789abcdef", "").await;
    assert_eq!(status, 404, "{head}");
    assert!(header(&head, "content-type").is_some_and(|t| t.starts_with("text/html")));
    bridge.shutdown().await;
    master.shutdown().await;
}

/// The document refuses what the server's validation refuses, and takes
/// what it takes: for each request body, the schema's verdict and the
/// protocol's parser's agree (the couplings a field schema cannot say
/// included: `threshold` only with `players-reached`, an endpoint that is
/// a URL, the subscription keys' lengths).
#[test]
fn the_request_schemas_refuse_what_the_server_refuses() {
    let d = Described {
        doc: protocol::openapi::document(),
        seen: BTreeSet::new(),
    };
    let spec = d.validator(&json!({ "$ref": "#/components/schemas/WebhookSpec" }));
    let server = |events: Value, extra: Value| {
        let mut v = json!({
            "url": "https://example.com/hook",
            "format": "standard",
            "events": events,
            "servers": "all",
        });
        if let (Value::Object(v), Value::Object(extra)) = (&mut v, extra) {
            v.extend(extra);
        }
        v
    };
    let webhooks = [
        server(json!(["server-online"]), json!({})),
        server(json!(["server-online"]), json!({ "threshold": null })),
        server(json!(["server-online"]), json!({ "threshold": 3 })),
        server(json!(["players-reached"]), json!({ "threshold": 3 })),
        server(json!(["players-reached"]), json!({})),
        server(json!(["players-reached"]), json!({ "threshold": null })),
        server(
            json!(["players-reached", "server-online"]),
            json!({ "threshold": 255 }),
        ),
        server(json!(["players-reached"]), json!({ "threshold": 0 })),
        server(json!(["server-online"]), json!({ "url": "" })),
        server(
            json!(["server-online"]),
            json!({ "url": "https://example.com/#x" }),
        ),
        server(
            json!(["server-online"]),
            json!({ "url": "https://u@example.com/" }),
        ),
        server(
            json!(["server-online"]),
            json!({ "url": "ftp://example.com/" }),
        ),
        server(
            json!(["server-online"]),
            json!({ "url": "https://exa mple.com/" }),
        ),
    ];
    let card = |extra: Value| {
        let mut v = json!({
            "url": "https://discord.com/api/webhooks/1/token",
            "format": "discord-card",
            "servers": {"nameContains": "feuer"},
        });
        if let (Value::Object(v), Value::Object(extra)) = (&mut v, extra) {
            v.extend(extra);
        }
        v
    };
    let cards = [
        card(json!({})),
        card(json!({ "events": ["server-online"] })),
        card(json!({ "events": null })),
        card(json!({ "threshold": 3 })),
        card(json!({ "cooldown": 0 })),
        card(json!({ "servers": null })),
    ];
    for body in webhooks.into_iter().chain(cards) {
        let parsed = protocol::watch::WebhookSpec::parse(body.to_string().as_bytes());
        assert_eq!(
            spec.is_valid(&body),
            parsed.is_ok(),
            "{body}: the server says {parsed:?}"
        );
    }
    let subscribe = d.validator(&json!({ "$ref": "#/components/schemas/PushSubscribe" }));
    let p256dh = format!("B{}", "A".repeat(85)) + "A";
    let auth = "A".repeat(22);
    let body = |endpoint: &str, p256dh: &str, auth: &str, watches: Value| {
        json!({
            "subscription": { "endpoint": endpoint, "keys": { "p256dh": p256dh, "auth": auth } },
            "watches": watches,
        })
    };
    let watch = |extra: Value| {
        let mut w = json!({ "key": "0123456789abcdef", "events": ["players-reached"] });
        if let (Value::Object(w), Value::Object(extra)) = (&mut w, extra) {
            w.extend(extra);
        }
        w
    };
    let pushes = [
        body("https://push.example/x", &p256dh, &auth, json!([])),
        body("", &p256dh, &auth, json!([])),
        body("https://push.example/x#f", &p256dh, &auth, json!([])),
        body("https://push.example/x", &p256dh[1..], &auth, json!([])),
        body("https://push.example/x", &p256dh, &auth[1..], json!([])),
        body(
            "https://push.example/x",
            &p256dh,
            "AAAAAAAAAAAAAAAAAAAAAB",
            json!([]),
        ),
        body(
            "https://push.example/x",
            &p256dh,
            &auth,
            json!([watch(json!({ "threshold": 2 }))]),
        ),
        body(
            "https://push.example/x",
            &p256dh,
            &auth,
            json!([watch(json!({}))]),
        ),
        body(
            "https://push.example/x",
            &p256dh,
            &auth,
            json!([{ "key": "0123456789abcdef", "events": ["server-online"], "threshold": 2 }]),
        ),
    ];
    for body in pushes {
        let parsed = protocol::push::PushRequest::parse(
            body.to_string().as_bytes(),
            protocol::push::Schemes::Https,
        );
        assert_eq!(
            subscribe.is_valid(&body),
            parsed.is_ok(),
            "{body}: the server says {parsed:?}"
        );
    }
}
