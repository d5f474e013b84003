//! The app's pages and their paths: the one place that says which path is
//! which page (the router in `router` only tracks where the tab is).

/// The app's pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    Home,
    Admin,
    Embed,
    NotFound,
}

impl Route {
    /// The page for a path (a trailing slash is the same page).
    pub fn from_path(path: &str) -> Route {
        match path.trim_end_matches('/') {
            "" => Route::Home,
            "/admin" => Route::Admin,
            "/embed" => Route::Embed,
            _ => Route::NotFound,
        }
    }

    /// The page's path.
    pub fn path(self) -> &'static str {
        match self {
            Route::Home => "/",
            Route::Admin => "/admin",
            Route::Embed => "/embed",
            Route::NotFound => "/404",
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
        for r in [Route::Home, Route::Admin, Route::Embed] {
            assert_eq!(Route::from_path(r.path()), r);
        }
    }
}
