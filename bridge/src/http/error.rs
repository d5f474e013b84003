//! The one error type of the bridge's HTTP API: [`HttpError`] *is* the
//! answer (`IntoResponse`), the documented JSON body
//! ([`protocol::api::ApiError`]) with its status and headers, so every
//! refusal under `/api/` and of the badges looks the same, whoever makes
//! it. The extractors' own refusals go through it too: [`Path`] and
//! [`Query`] stand in for axum's, and [`json_errors`] replaces whatever
//! the framework or a file server would answer on its own (a 405 of a
//! method router, a 413, a body that is not JSON) with the same JSON.

use std::fmt::Display;

use axum::{
    extract::{FromRequestParts, Request},
    http::{header, request::Parts, HeaderMap, HeaderValue, Method, StatusCode},
    middleware::Next,
    response::{IntoResponse, Response},
};
use protocol::{api::ApiError, watch::FieldError};
use serde::de::DeserializeOwned;

/// Every answer of the API that is not a success, by what went wrong.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HttpError {
    /// The request is malformed (400), `field` naming the part at fault.
    #[error("{message}")]
    BadRequest {
        message: String,
        field: Option<String>,
    },
    /// A wrong or missing admin token (401).
    #[error("the admin token is missing or wrong")]
    Unauthorized,
    /// The token is right but the thing is not the client's (403).
    #[error("{0}")]
    Forbidden(String),
    /// The path names nothing (404).
    #[error("{0}")]
    NotFound(String),
    /// The path does not take this method (405); `allow` lists those it
    /// takes.
    #[error("this path does not take this method")]
    MethodNotAllowed { allow: Option<HeaderValue> },
    /// The body did not arrive in time (408).
    #[error("body: not sent in time")]
    RequestTimeout,
    /// The request conflicts with what is stored: there is no room for
    /// it (409).
    #[error("{0}")]
    Conflict(String),
    /// The body is larger than the path reads (413).
    #[error("body: larger than {} KiB", .max / 1024)]
    PayloadTooLarge { max: usize },
    /// The body is not JSON (415).
    #[error("body: must be sent as application/json")]
    UnsupportedMediaType,
    /// The client must wait `retry_after` seconds (429).
    #[error("{message}")]
    TooManyRequests { message: String, retry_after: u64 },
    /// Something the bridge needs is unreachable for now (503), to be
    /// asked again after `retry_after` s; `None`: off until the operator
    /// changes the configuration, so no `Retry-After`.
    #[error("{message}")]
    Unavailable {
        message: String,
        retry_after: Option<u64>,
    },
    /// Our fault (500); what went wrong is logged, never sent.
    #[error("the bridge could not answer; the cause is in its log")]
    Internal,
    /// A status the bridge does not make itself (what the framework
    /// answered), with its reason phrase as the message.
    #[error("{}", .0.canonical_reason().unwrap_or("the request was refused"))]
    Other(StatusCode),
}

impl HttpError {
    /// A 400 saying `message`.
    pub(crate) fn bad_request(message: impl Display) -> Self {
        Self::BadRequest {
            message: message.to_string(),
            field: None,
        }
    }

    /// A 404 saying `message`.
    pub(crate) fn not_found(message: impl Display) -> Self {
        Self::NotFound(message.to_string())
    }

    /// A 503 saying `message`, to be asked again after `retry_after` s.
    pub(crate) fn unavailable(message: impl Display, retry_after: u64) -> Self {
        Self::Unavailable {
            message: message.to_string(),
            retry_after: Some(retry_after),
        }
    }

    /// A 503 saying why a feature is off: asking again will not help.
    pub(crate) fn off(message: impl Display) -> Self {
        Self::Unavailable {
            message: message.to_string(),
            retry_after: None,
        }
    }

    /// The error of a status another layer answered (for [`json_errors`]).
    fn of_status(status: StatusCode) -> Self {
        match status {
            StatusCode::BAD_REQUEST => Self::bad_request("the request is malformed"),
            StatusCode::NOT_FOUND => Self::not_found("nothing here; see /api/openapi.json"),
            StatusCode::METHOD_NOT_ALLOWED => Self::MethodNotAllowed { allow: None },
            StatusCode::REQUEST_TIMEOUT => Self::RequestTimeout,
            StatusCode::UNSUPPORTED_MEDIA_TYPE => Self::UnsupportedMediaType,
            StatusCode::INTERNAL_SERVER_ERROR => Self::Internal,
            status => Self::Other(status),
        }
    }

    /// The status this error is answered with.
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest { .. } => StatusCode::BAD_REQUEST,
            Self::Unauthorized => StatusCode::UNAUTHORIZED,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            Self::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
            Self::Conflict(_) => StatusCode::CONFLICT,
            Self::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::Unavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            Self::Other(status) => *status,
        }
    }

    /// The documented body.
    pub(crate) fn body(&self) -> ApiError {
        ApiError {
            error: self.to_string(),
            field: match self {
                Self::BadRequest { field, .. } => field.clone(),
                Self::PayloadTooLarge { .. }
                | Self::RequestTimeout
                | Self::UnsupportedMediaType => Some("body".into()),
                _ => None,
            },
        }
    }
}

impl From<&FieldError> for HttpError {
    fn from(e: &FieldError) -> Self {
        let body = ApiError::from(e);
        Self::BadRequest {
            message: body.error,
            field: body.field,
        }
    }
}

impl From<FieldError> for HttpError {
    fn from(e: FieldError) -> Self {
        Self::from(&e)
    }
}

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        let mut h = HeaderMap::new();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        match &self {
            Self::Unauthorized => {
                h.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            Self::MethodNotAllowed { allow: Some(allow) } => {
                h.insert(header::ALLOW, allow.clone());
            }
            Self::TooManyRequests { retry_after, .. }
            | Self::Unavailable {
                retry_after: Some(retry_after),
                ..
            } => {
                h.insert(header::RETRY_AFTER, HeaderValue::from(*retry_after));
            }
            Self::Internal => {
                master::throttled!(warn, "an API answer failed: answered 500");
            }
            _ => {}
        }
        (self.status(), h, protocol::json::to_string(&self.body())).into_response()
    }
}

/// A path's parameters, as axum's `Path`, refused as a [`HttpError`]: a
/// parameter that is not readable (not UTF-8 once decoded) names nothing
/// here, so it is a 404.
#[derive(Debug)]
pub(crate) struct Path<T>(pub(crate) T);

impl<T, S> FromRequestParts<S> for Path<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Path::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(value)) => Ok(Self(value)),
            Err(e) => Err(HttpError::not_found(format_args!(
                "no such path: {}",
                innermost(&e)
            ))),
        }
    }
}

/// A query string, as axum's `Query`, refused as a [`HttpError`] (400)
/// that says why: a parameter given twice, or one that is not readable.
#[derive(Debug)]
pub(crate) struct Query<T>(pub(crate) T);

impl<T, S> FromRequestParts<S> for Query<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(value)) => Ok(Self(value)),
            Err(e) => Err(HttpError::bad_request(format_args!(
                "the query is not readable: {}",
                innermost(&e)
            ))),
        }
    }
}

/// The deepest cause of `e`: the sentence serde wrote ("duplicate field
/// `range`"), without the framework's wrapping.
fn innermost(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = e;
    while let Some(source) = cause.source() {
        cause = source;
    }
    master::logtext::cut(&cause.to_string()).to_string()
}

/// Whether `path` is answered with the API's JSON refusals: the API, and
/// the badges and the cards (whose successes are images, whose refusals
/// are JSON).
pub(crate) fn is_api(path: &str) -> bool {
    path == "/api"
        || path.starts_with("/api/")
        || path == "/badge.svg"
        || path.starts_with("/badge/")
        || path == "/card.png"
        || path.starts_with("/card/")
}

/// Whether `headers` say the body is JSON (`application/json`, any
/// parameters).
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"))
}

/// Whether a request has a body (a length above zero, or chunks).
fn has_body(headers: &HeaderMap) -> bool {
    headers.contains_key(header::TRANSFER_ENCODING)
        || headers
            .get(header::CONTENT_LENGTH)
            .is_some_and(|v| v.as_bytes() != b"0")
}

/// Whether a request's body says it is something else than JSON (one
/// that says nothing is read as JSON: `curl -d` and older clients).
fn declared_not_json(headers: &HeaderMap) -> bool {
    has_body(headers) && headers.contains_key(header::CONTENT_TYPE) && !is_json(headers)
}

/// The API's net under every handler: a body declared as something else
/// than JSON is refused (415) before any handler reads it, and any refusal not already the
/// documented JSON (the framework's 405 of a method router, a file
/// server's error, an empty 500) is replaced by [`HttpError`] of the same
/// status, keeping the headers that tell the client what to do (`Allow`,
/// `Retry-After`, `WWW-Authenticate`).
pub(crate) async fn json_errors(req: Request, next: Next) -> Response {
    if !is_api(req.uri().path()) {
        return next.run(req).await;
    }
    // Any page may read a public path's refusal, as it may read its
    // answers; the admin's API is for the bridge's own page only.
    let public = !req.uri().path().starts_with("/api/admin/");
    let takes_body = matches!(
        *req.method(),
        Method::POST | Method::PUT | Method::PATCH | Method::DELETE
    );
    let mut response = if takes_body && declared_not_json(req.headers()) {
        HttpError::UnsupportedMediaType.into_response()
    } else {
        next.run(req).await
    };
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    if public {
        response.headers_mut().insert(
            header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("*"),
        );
    }
    if is_json(response.headers()) {
        return response;
    }
    let kept = response.headers().clone();
    let error = match status {
        StatusCode::METHOD_NOT_ALLOWED => HttpError::MethodNotAllowed {
            allow: kept.get(header::ALLOW).cloned(),
        },
        status => HttpError::of_status(status),
    };
    let mut replaced = error.into_response();
    for name in [
        header::RETRY_AFTER,
        header::WWW_AUTHENTICATE,
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
    ] {
        if let Some(v) = kept.get(&name) {
            replaced.headers_mut().insert(name, v.clone());
        }
    }
    replaced
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_is_the_documented_json_with_its_status() {
        let errors = [
            HttpError::bad_request("range must be one of 1h"),
            HttpError::Unauthorized,
            HttpError::not_found("no such webhook"),
            HttpError::MethodNotAllowed { allow: None },
            HttpError::PayloadTooLarge { max: 8192 },
            HttpError::UnsupportedMediaType,
            HttpError::unavailable("the history database is unreachable", 5),
            HttpError::Internal,
            HttpError::Other(StatusCode::URI_TOO_LONG),
        ];
        for e in errors {
            let status = e.status();
            let text = protocol::json::to_string(&e.body());
            let body: ApiError = serde_json::from_str(&text).unwrap();
            assert!(!body.error.is_empty(), "{status}: {text}");
            let response = e.into_response();
            assert_eq!(response.status(), status);
            assert!(is_json(response.headers()), "{status}");
        }
        let e = HttpError::PayloadTooLarge { max: 8192 };
        assert_eq!(
            e.body(),
            ApiError {
                error: "body: larger than 8 KiB".into(),
                field: Some("body".into())
            }
        );
        let r = HttpError::unavailable("later", 5).into_response();
        assert_eq!(r.headers()[header::RETRY_AFTER], "5");
    }

    #[test]
    fn json_is_told_by_its_media_type() {
        let mut h = HeaderMap::new();
        assert!(!is_json(&h));
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("Application/JSON; charset=utf-8"),
        );
        assert!(is_json(&h));
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
        assert!(!is_json(&h));
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/jsonx"),
        );
        assert!(!is_json(&h));
    }
}
