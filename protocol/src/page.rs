//! The page's routes and their paths: the one place that says which path
//! is which page. The page routes with it (its router only tracks where
//! the tab is); the bridge answers a path that is no page with 404 and
//! writes each page's facts into the HTML it sends (`docs/protocol.md`
//! §2.6).

use crate::ServerKey;

/// The app's pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    Home,
    Admin,
    Embed,
    /// One server's page (`/server/{key}`): its details, history and badge.
    Server(ServerKey),
    /// One server, compact, for an `<iframe>` (`/embed/server/{key}`).
    EmbedServer(ServerKey),
    NotFound,
}

impl Route {
    /// The page for a path (a trailing slash is the same page). A server
    /// path whose key is not 16 lowercase hex digits names no page.
    pub fn from_path(path: &str) -> Route {
        let path = path.trim_end_matches('/');
        let key = |rest: &str| rest.parse::<ServerKey>().ok();
        if let Some(k) = path.strip_prefix("/server/").and_then(key) {
            return Route::Server(k);
        }
        if let Some(k) = path.strip_prefix("/embed/server/").and_then(key) {
            return Route::EmbedServer(k);
        }
        match path {
            "" => Route::Home,
            "/admin" => Route::Admin,
            "/embed" => Route::Embed,
            _ => Route::NotFound,
        }
    }

    /// The page's path.
    pub fn path(self) -> String {
        match self {
            Route::Home => "/".to_owned(),
            Route::Admin => "/admin".to_owned(),
            Route::Embed => "/embed".to_owned(),
            Route::Server(k) => format!("/server/{k}"),
            Route::EmbedServer(k) => format!("/embed/server/{k}"),
            Route::NotFound => "/404".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_pick_pages() {
        assert_eq!(Route::from_path("/"), Route::Home);
        assert_eq!(Route::from_path(""), Route::Home);
        assert_eq!(Route::from_path("/admin"), Route::Admin);
        assert_eq!(Route::from_path("/admin/"), Route::Admin);
        assert_eq!(Route::from_path("/embed"), Route::Embed);
        assert_eq!(Route::from_path("/nope"), Route::NotFound);
        let k = ServerKey(0x0123_4567_89ab_cdef);
        assert_eq!(
            Route::from_path("/server/0123456789abcdef"),
            Route::Server(k)
        );
        assert_eq!(
            Route::from_path("/embed/server/0123456789abcdef/"),
            Route::EmbedServer(k)
        );
        for bad in [
            "/server/",
            "/server/0123456789ABCDEF",
            "/server/0123456789abcde",
            "/server/0123456789abcdef/x",
        ] {
            assert_eq!(Route::from_path(bad), Route::NotFound, "{bad}");
        }
        for r in [
            Route::Home,
            Route::Admin,
            Route::Embed,
            Route::Server(k),
            Route::EmbedServer(k),
        ] {
            assert_eq!(Route::from_path(&r.path()), r);
        }
    }
}
