//! The front end as files: `dist/` served the way nginx serves it in a
//! deployment. Compression happens once, at build time ([`precompress`]
//! writes `NAME.br` and `NAME.gz` beside each file), and the bridge picks the
//! twin the browser's `Accept-Encoding` allows instead of compressing the
//! `.wasm` files on every request. Trunk's hashed file names never change
//! content, so browsers may keep them forever; the pages must be asked for
//! again each time, or a browser would keep loading an old build's hashed
//! files. Two pages: `index.html`, the player's bundle, which the bridge
//! sends with each page's facts written in (`pages`, for `/`, `/embed` and
//! `/server/{key}`); and `admin/index.html`, the admin's bundle (the same
//! app with the admin page), served here at `/admin`. A path that names
//! no file is a 404 here; `pages` answers it with the page that says so.

use std::{
    fs,
    io::{self, Write},
    num::NonZeroUsize,
    path::{Path, PathBuf},
    sync::atomic::{AtomicUsize, Ordering},
    thread,
};

use axum::{
    extract::Request,
    http::{header, HeaderValue, StatusCode},
    middleware::{self, Next},
    response::{IntoResponse, Response},
    Router,
};
use tower_http::services::{ServeDir, ServeFile};

/// `Cache-Control` of Trunk's hashed files (`frontend-<hash>_bg.wasm`, ...):
/// a new build has new names, so a cached copy is never stale.
pub const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// `Cache-Control` of everything else (the pages, client-side routes):
/// browsers may store it but must revalidate before each use.
pub const NO_CACHE: &str = "no-cache";

/// Brotli quality used by [`precompress`]: the highest (11); it is paid
/// once per build, not per request.
pub const BROTLI_QUALITY: i32 = 11;

/// Brotli window (log2 bytes): the largest standard window, so the whole
/// `.wasm` is one context.
const BROTLI_WINDOW: i32 = 24;

/// Why [`precompress`] failed: which file, and what the system said.
#[derive(Debug, thiserror::Error)]
#[error("{action} {path}: {source}")]
pub struct PrecompressError {
    action: &'static str,
    path: PathBuf,
    source: io::Error,
}

/// What [`precompress`] wrote: per original file, its size and its twins'.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Precompressed {
    /// `(file, original bytes, .br bytes, .gz bytes)`; a twin that would not
    /// be smaller than the original is not written and counts as `None`.
    pub files: Vec<(PathBuf, u64, Option<u64>, Option<u64>)>,
}

/// Where the admin's bundle is, under the build's directory and in URLs.
pub const ADMIN_DIR: &str = "admin";

/// Serves the Trunk build in `dir`: files with their precompressed twins
/// chosen by `Accept-Encoding`, `/admin` as `dir/admin/index.html`, and a
/// 404 for anything else, with the `Cache-Control` described above and
/// `Vary: Accept-Encoding` so shared caches keep one copy per encoding.
pub fn router(dir: &Path) -> Router {
    let admin = ServeFile::new(dir.join(ADMIN_DIR).join("index.html"))
        .precompressed_br()
        .precompressed_gzip();
    let files = ServeDir::new(dir).precompressed_br().precompressed_gzip();
    Router::new()
        .route_service(&format!("/{ADMIN_DIR}"), admin.clone())
        .route_service(&format!("/{ADMIN_DIR}/"), admin)
        .fallback_service(files)
        .layer(middleware::from_fn(cache_headers))
}

/// The longest file name a file system takes (`NAME_MAX`): a path with a
/// longer segment names no file, and asking the file system would fail
/// ("name too long"), which the file server answers 500.
const NAME_MAX: usize = 255;

/// Whether a segment of `path` (once percent-decoded) is longer than any
/// file name can be.
fn names_no_file(path: &str) -> bool {
    path.split('/').any(|segment| {
        let escapes = segment
            .as_bytes()
            .windows(3)
            .filter(|w| w[0] == b'%' && w[1].is_ascii_hexdigit() && w[2].is_ascii_hexdigit())
            .count();
        segment.len() - 2 * escapes > NAME_MAX
    })
}

/// Adds `Cache-Control` and `Vary` to a static response; a path no file
/// can have is a 404 without asking the file system.
async fn cache_headers(req: Request, next: Next) -> Response {
    if names_no_file(req.uri().path()) {
        return (StatusCode::NOT_FOUND, "not found\n").into_response();
    }
    let hashed = is_hashed(req.uri().path());
    let mut res = next.run(req).await;
    let status = res.status();
    let headers = res.headers_mut();
    // Only a file that exists is kept forever (a page never is).
    let html = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"));
    let keep = hashed && !html && (status.is_success() || status.as_u16() == 304);
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(if keep { IMMUTABLE } else { NO_CACHE }),
    );
    headers.append(header::VARY, HeaderValue::from_static("accept-encoding"));
    res
}

/// Whether `path` names one of Trunk's content-hashed files: a segment
/// whose name (before its first dot) ends in `-` and 8 to 16 hex digits,
/// optionally followed by `_bg` (wasm-bindgen's module), like
/// `frontend-72ee731f47c37d54_bg.wasm` or `style-0a1b2c3d4e5f6a7b.css`.
/// Trunk writes its 64-bit hash without leading zeros, so one build in 16
/// has a 15-digit name (`admin-1a635883f45ec0e_bg.wasm`); fewer than 8
/// (one build in four billion) only costs a revalidation.
pub fn is_hashed(path: &str) -> bool {
    path.split('/').any(|segment| {
        let stem = segment.split('.').next().unwrap_or_default();
        let stem = stem.strip_suffix("_bg").unwrap_or(stem);
        match stem.rsplit_once('-') {
            Some((name, hash)) => {
                !name.is_empty()
                    && (8..=16).contains(&hash.len())
                    && hash.bytes().all(|b| b.is_ascii_hexdigit())
            }
            None => false,
        }
    })
}

/// Writes `NAME.br` (brotli, quality [`BROTLI_QUALITY`]) and `NAME.gz`
/// (gzip level 9) beside every file under `dir`, recursively; the bridge
/// and nginx (`brotli_static`, `gzip_static`) serve them. Safe to run again:
/// twins are rewritten (through a temporary file and a rename, so a server
/// reading `dir` never sees half a file), and a twin that would not be
/// smaller than its original is removed instead, so no stale one is served.
/// Files are compressed on as many threads as the machine has cores: the
/// two bundles' `.wasm` files take most of the time, one each.
pub fn precompress(dir: &Path) -> Result<Precompressed, PrecompressError> {
    let files = originals(dir)?;
    let next = AtomicUsize::new(0);
    let workers = thread::available_parallelism()
        .map_or(1, NonZeroUsize::get)
        .clamp(1, files.len().max(1));
    let mut out = Precompressed::default();
    thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    while let Some(path) = files.get(next.fetch_add(1, Ordering::Relaxed)) {
                        let data = fs::read(path).map_err(err("cannot read", path))?;
                        let br = write_twin(path, "br", &data, brotli)?;
                        let gz = write_twin(path, "gz", &data, gzip)?;
                        done.push((path.clone(), data.len() as u64, br, gz));
                    }
                    Ok(done)
                })
            })
            .collect();
        for handle in handles {
            let done = handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
            out.files.extend(done);
        }
        Ok::<_, PrecompressError>(())
    })?;
    out.files.sort();
    Ok(out)
}

/// Every file under `dir`, recursively, but the twins and temporary files
/// [`precompress`] writes.
fn originals(dir: &Path) -> Result<Vec<PathBuf>, PrecompressError> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        let entries = fs::read_dir(&folder).map_err(err("cannot list", &folder))?;
        for entry in entries {
            let entry = entry.map_err(err("cannot list", &folder))?;
            let path = entry.path();
            let kind = entry.file_type().map_err(err("cannot stat", &path))?;
            if kind.is_dir() {
                pending.push(path);
                continue;
            }
            let twin_or_temp = path
                .extension()
                .is_some_and(|x| x == "br" || x == "gz" || x == "tmp");
            if kind.is_file() && !twin_or_temp {
                files.push(path);
            }
        }
    }
    Ok(files)
}

fn err(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> PrecompressError {
    let path = path.to_path_buf();
    move |source| PrecompressError {
        action,
        path,
        source,
    }
}

/// Writes `path.EXT` from `compress(data)` if smaller than `data`, else
/// removes any old one; returns the written size.
fn write_twin(
    path: &Path,
    ext: &str,
    data: &[u8],
    compress: fn(&[u8]) -> io::Result<Vec<u8>>,
) -> Result<Option<u64>, PrecompressError> {
    let mut twin = path.as_os_str().to_owned();
    twin.push(".");
    twin.push(ext);
    let twin = PathBuf::from(twin);
    let packed = compress(data).map_err(err("cannot compress", path))?;
    if packed.len() >= data.len() {
        match fs::remove_file(&twin) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(err("cannot remove", &twin)(e)),
        }
        return Ok(None);
    }
    let mut temp = twin.as_os_str().to_owned();
    temp.push(".tmp");
    let temp = PathBuf::from(temp);
    fs::write(&temp, &packed).map_err(err("cannot write", &temp))?;
    fs::rename(&temp, &twin).map_err(err("cannot rename to", &twin))?;
    Ok(Some(packed.len() as u64))
}

fn brotli(data: &[u8]) -> io::Result<Vec<u8>> {
    let params = brotli::enc::BrotliEncoderParams {
        quality: BROTLI_QUALITY,
        lgwin: BROTLI_WINDOW,
        size_hint: data.len(),
        ..Default::default()
    };
    let mut out = Vec::new();
    brotli::BrotliCompress(&mut &data[..], &mut out, &params)?;
    Ok(out)
}

fn gzip(data: &[u8]) -> io::Result<Vec<u8>> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(data)?;
    encoder.finish()
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use axum::{body::Body, http::StatusCode};
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    use super::*;

    const WASM: &str = "frontend-72ee731f47c37d54_bg.wasm";
    const INDEX: &str = "<!doctype html><title>lobby</title><script src=\"/frontend-72ee731f47c37d54.js\"></script>";
    /// The admin's bundle, under `admin/`.
    const ADMIN_WASM: &str = "admin/admin-0a1b2c3d4e5f6a7b_bg.wasm";
    const ADMIN_INDEX: &str = "<!doctype html><title>lobby</title><script src=\"/admin/admin-0a1b2c3d4e5f6a7b.js\"></script>";

    /// A fake Trunk build of both bundles: compressible `.wasm`, `.js` and
    /// `index.html` at the top and under `admin/`, plus a tiny file that
    /// compression would only make bigger.
    fn dist() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("temp dir");
        let wasm = |seed: u32| -> Vec<u8> {
            (0..50_000u32)
                .flat_map(|i| ((i + seed) % 251).to_le_bytes())
                .collect()
        };
        fs::write(dir.path().join(WASM), wasm(0)).expect("write");
        fs::write(
            dir.path().join("frontend-72ee731f47c37d54.js"),
            "export function run() { return 1; }\n".repeat(200),
        )
        .expect("write");
        fs::write(dir.path().join("index.html"), INDEX.repeat(20)).expect("write");
        fs::write(dir.path().join("x.txt"), "x").expect("write");
        fs::create_dir(dir.path().join(ADMIN_DIR)).expect("mkdir");
        fs::write(dir.path().join(ADMIN_WASM), wasm(7)).expect("write");
        fs::write(
            dir.path().join("admin/admin-0a1b2c3d4e5f6a7b.js"),
            "export function admin() { return 2; }\n".repeat(200),
        )
        .expect("write");
        fs::write(dir.path().join("admin/index.html"), ADMIN_INDEX.repeat(20)).expect("write");
        dir
    }

    async fn get(dir: &Path, path: &str, accept: Option<&str>) -> (Response, Vec<u8>) {
        let mut req = Request::builder().uri(path);
        if let Some(accept) = accept {
            req = req.header(header::ACCEPT_ENCODING, accept);
        }
        let res = router(dir)
            .oneshot(req.body(Body::empty()).expect("request"))
            .await
            .expect("infallible");
        let (parts, body) = res.into_parts();
        let bytes = body.collect().await.expect("body").to_bytes().to_vec();
        (Response::from_parts(parts, Body::empty()), bytes)
    }

    fn header_of(res: &Response, name: header::HeaderName) -> &str {
        res.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    }

    #[test]
    fn knows_trunks_hashed_names() {
        assert!(is_hashed("/frontend-72ee731f47c37d54_bg.wasm"));
        assert!(is_hashed("/frontend-72ee731f47c37d54.js"));
        assert!(is_hashed("/style-0a1b2c3d4e5f6a7b.css"));
        assert!(is_hashed("/snippets/frontend-72ee731f47c37d54/inline0.js"));
        assert!(is_hashed("/admin/admin-72ee731f47c37d54_bg.wasm"));
        assert!(is_hashed("/admin/style-0a1b2c3d4e5f6a7b.css"));
        assert!(!is_hashed("/"));
        assert!(!is_hashed("/index.html"));
        assert!(!is_hashed("/admin"));
        assert!(!is_hashed("/admin/"));
        assert!(!is_hashed("/admin/index.html"));
        assert!(!is_hashed("/frontend.wasm"));
        // Trunk's hash without its leading zeros.
        assert!(
            is_hashed("/admin/admin-1a635883f45ec0e_bg.wasm"),
            "15 digits"
        );
        assert!(is_hashed("/frontend-72ee731f.js"), "8 digits");
        assert!(!is_hashed("/frontend-72ee731.js"), "7 digits");
        assert!(!is_hashed("/frontend-72ee731f47c37d54a.js"), "17 digits");
        assert!(!is_hashed("/frontend-72ee731f47c37d5x.js"), "not hex");
        assert!(!is_hashed("/-72ee731f47c37d54.js"), "no name");
    }

    #[test]
    fn precompress_writes_smaller_twins_that_decode_to_the_original() {
        let dir = dist();
        let report = precompress(dir.path()).expect("precompress");
        // Both bundles: the admin's, in its folder, too.
        assert_eq!(report.files.len(), 4 + 3, "{report:?}");
        for name in [WASM, ADMIN_WASM] {
            let wasm = fs::read(dir.path().join(name)).expect("read");
            let br = fs::read(dir.path().join(format!("{name}.br"))).expect("br twin");
            let gz = fs::read(dir.path().join(format!("{name}.gz"))).expect("gz twin");
            assert!(br.len() < gz.len() && gz.len() < wasm.len(), "{name}");
            let mut unbr = Vec::new();
            brotli::Decompressor::new(&br[..], 4096)
                .read_to_end(&mut unbr)
                .expect("brotli");
            assert_eq!(unbr, wasm, "{name}");
            let mut ungz = Vec::new();
            flate2::read::GzDecoder::new(&gz[..])
                .read_to_end(&mut ungz)
                .expect("gzip");
            assert_eq!(ungz, wasm, "{name}");
        }
        // One byte only grows: no twin, so nothing stale is ever served.
        assert!(!dir.path().join("x.txt.br").exists());
        assert!(!dir.path().join("x.txt.gz").exists());

        // Again: same twins, no twins of twins, no temporary files left.
        let again = precompress(dir.path()).expect("precompress again");
        assert_eq!(again, report);
        let names = |folder: &Path| -> Vec<String> {
            let mut names: Vec<String> = fs::read_dir(folder)
                .expect("list")
                .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        };
        let top = names(dir.path());
        assert_eq!(top.len(), 4 + 3 * 2 + 1, "{top:?}");
        assert!(top.iter().all(|n| !n.ends_with(".tmp")), "{top:?}");
        let admin = names(&dir.path().join(ADMIN_DIR));
        assert_eq!(admin.len(), 3 * 3, "{admin:?}");
        assert!(admin.iter().all(|n| !n.ends_with(".tmp")), "{admin:?}");
    }

    #[tokio::test]
    async fn serves_the_twin_the_browser_accepts_and_caches_hashed_files_forever() {
        let dir = dist();
        precompress(dir.path()).expect("precompress");
        for name in [WASM, ADMIN_WASM] {
            let path = format!("/{name}");
            let wasm = fs::read(dir.path().join(name)).expect("read");

            let (res, body) = get(dir.path(), &path, Some("gzip, deflate, br, zstd")).await;
            assert_eq!(res.status(), StatusCode::OK, "{path}");
            assert_eq!(header_of(&res, header::CONTENT_ENCODING), "br", "{path}");
            assert_eq!(
                header_of(&res, header::CONTENT_TYPE),
                "application/wasm",
                "{path}"
            );
            assert_eq!(header_of(&res, header::CACHE_CONTROL), IMMUTABLE, "{path}");
            assert_eq!(header_of(&res, header::VARY), "accept-encoding", "{path}");
            let br = fs::read(dir.path().join(format!("{name}.br"))).expect("br twin");
            assert_eq!(body, br, "{path}");

            let (res, body) = get(dir.path(), &path, Some("gzip")).await;
            assert_eq!(header_of(&res, header::CONTENT_ENCODING), "gzip", "{path}");
            assert_eq!(
                body.len() as u64,
                fs::metadata(dir.path().join(format!("{name}.gz")))
                    .expect("gz")
                    .len(),
                "{path}"
            );

            let (res, body) = get(dir.path(), &path, None).await;
            assert_eq!(header_of(&res, header::CONTENT_ENCODING), "", "{path}");
            assert_eq!(body, wasm, "{path}");
            assert_eq!(header_of(&res, header::CACHE_CONTROL), IMMUTABLE, "{path}");
        }
        // The admin's JavaScript: its type, its twin, kept forever.
        let (res, body) = get(dir.path(), "/admin/admin-0a1b2c3d4e5f6a7b.js", Some("br")).await;
        assert_eq!(res.status(), StatusCode::OK);
        assert_eq!(header_of(&res, header::CONTENT_TYPE), "text/javascript");
        assert_eq!(header_of(&res, header::CONTENT_ENCODING), "br");
        assert_eq!(header_of(&res, header::CACHE_CONTROL), IMMUTABLE);
        let twin = dir.path().join("admin/admin-0a1b2c3d4e5f6a7b.js.br");
        assert_eq!(body, fs::read(twin).expect("br twin"));
    }

    #[tokio::test]
    async fn index_is_never_cached_stale_and_other_paths_are_no_file() {
        let dir = dist();
        precompress(dir.path()).expect("precompress");
        let index = fs::read(dir.path().join("index.html")).expect("read");
        for path in ["/", "/index.html"] {
            let (res, body) = get(dir.path(), path, None).await;
            assert_eq!(res.status(), StatusCode::OK, "{path}");
            assert_eq!(header_of(&res, header::CACHE_CONTROL), NO_CACHE, "{path}");
            assert_eq!(body, index, "{path}");
        }
        // The app's routes are the pages' (`pages`), and a hashed name
        // from another build is no file: 404, never kept under that name.
        for path in [
            "/embed?theme=dark",
            "/server/0123456789abcdef",
            "/frontend-0000000000000000_bg.wasm",
            "/admin/admin-0000000000000000_bg.wasm",
        ] {
            let (res, _) = get(dir.path(), path, None).await;
            assert_eq!(res.status(), StatusCode::NOT_FOUND, "{path}");
            assert_eq!(header_of(&res, header::CACHE_CONTROL), NO_CACHE, "{path}");
        }
    }

    #[tokio::test]
    async fn admin_is_its_own_page_and_never_cached_stale() {
        let dir = dist();
        precompress(dir.path()).expect("precompress");
        let page = fs::read(dir.path().join("admin/index.html")).expect("read");
        let page_br = fs::read(dir.path().join("admin/index.html.br")).expect("read");
        let page_gz = fs::read(dir.path().join("admin/index.html.gz")).expect("read");
        for path in ["/admin", "/admin/", "/admin?lang=de", "/admin/index.html"] {
            let (res, body) = get(dir.path(), path, None).await;
            assert_eq!(res.status(), StatusCode::OK, "{path}");
            assert!(
                header_of(&res, header::CONTENT_TYPE).starts_with("text/html"),
                "{path}"
            );
            assert_eq!(header_of(&res, header::CACHE_CONTROL), NO_CACHE, "{path}");
            assert_eq!(header_of(&res, header::VARY), "accept-encoding", "{path}");
            assert_eq!(body, page, "{path}");
            let (res, body) = get(dir.path(), path, Some("gzip, br")).await;
            assert_eq!(header_of(&res, header::CONTENT_ENCODING), "br", "{path}");
            assert_eq!(header_of(&res, header::CACHE_CONTROL), NO_CACHE, "{path}");
            assert_eq!(body, page_br, "{path}");
            let (res, body) = get(dir.path(), path, Some("gzip")).await;
            assert_eq!(header_of(&res, header::CONTENT_ENCODING), "gzip", "{path}");
            assert_eq!(body, page_gz, "{path}");
        }
        // Below /admin/, a path that names no file is none, as anywhere.
        let (res, _) = get(dir.path(), "/admin/nope", None).await;
        assert_eq!(res.status(), StatusCode::NOT_FOUND);
        assert_eq!(header_of(&res, header::CACHE_CONTROL), NO_CACHE);
    }

    #[tokio::test]
    async fn a_name_no_file_can_have_is_a_404_not_a_500() {
        let dir = dist();
        let long = "a".repeat(NAME_MAX + 1);
        for path in [
            format!("/{long}"),
            format!("/admin/{long}.wasm"),
            format!("/x/{long}/y"),
        ] {
            let (res, _) = get(dir.path(), &path, None).await;
            assert_eq!(res.status(), StatusCode::NOT_FOUND, "{path}");
        }
        // Escapes count as the bytes they decode to: this name fits.
        let escaped = "%61".repeat(NAME_MAX);
        assert!(!names_no_file(&format!("/{escaped}")));
        fs::write(dir.path().join("a".repeat(NAME_MAX)), "longest").expect("write");
        let (res, body) = get(dir.path(), &format!("/{escaped}"), None).await;
        assert_eq!(res.status(), StatusCode::OK, "the file of that name");
        assert_eq!(body, b"longest");
    }

    #[tokio::test]
    async fn without_twins_files_are_served_as_they_are() {
        let dir = dist();
        let (res, body) = get(dir.path(), &format!("/{WASM}"), Some("br, gzip")).await;
        assert_eq!(res.status(), StatusCode::OK);
        assert_eq!(header_of(&res, header::CONTENT_ENCODING), "");
        assert_eq!(body, fs::read(dir.path().join(WASM)).expect("read"));
    }

    #[tokio::test]
    async fn the_service_worker_is_javascript_at_the_root_and_never_stale() {
        let dir = dist();
        let worker = "self.addEventListener('push', () => {});\n".repeat(40);
        fs::write(dir.path().join("sw.js"), &worker).expect("write");
        precompress(dir.path()).expect("precompress");
        // The page registers it with its sentences in the query.
        for path in ["/sw.js", "/sw.js?words=%7B%7D"] {
            let (res, body) = get(dir.path(), path, None).await;
            assert_eq!(res.status(), StatusCode::OK, "{path}");
            // A browser refuses a worker of another type.
            assert_eq!(
                header_of(&res, header::CONTENT_TYPE),
                "text/javascript",
                "{path}"
            );
            // A new build's worker must reach browsers: revalidated each time.
            assert_eq!(header_of(&res, header::CACHE_CONTROL), NO_CACHE, "{path}");
            assert_eq!(body, worker.as_bytes(), "{path}");
        }
    }
}
