//! What the component tests share.

use std::time::Duration;

/// How long a wait goes on before it fails the test: only a hung test
/// reaches it. Chromium's first start on a fresh machine, beside a
/// compiler, takes seconds; a slow machine is slow, not red.
const HUNG: f64 = 60_000.0;

/// Polls `check` every 10 ms until it holds (renders are asynchronous);
/// panics naming `what` once [`HUNG`] has passed on the clock, not after a
/// count of polls, which a busy machine stretches.
pub async fn until(what: &str, mut check: impl FnMut() -> bool) {
    let start = js_sys::Date::now();
    while !check() {
        if js_sys::Date::now() - start > HUNG {
            panic!("timed out waiting for {what}");
        }
        gloo_timers::future::sleep(Duration::from_millis(10)).await;
    }
}

/// One test's component, rendered into an element of its own at the end
/// of the page. The tests share one page: dropping it (at the test's end,
/// or when it panics) destroys the app, so nothing it scheduled (rows
/// still to be drawn in slices, a timer) renders into the next test's
/// page or writes `window.__lobbyMetrics` after that test's own render,
/// and removes the element.
pub struct Mounted<C: yew::BaseComponent> {
    /// The element the component renders into.
    pub root: web_sys::Element,
    app: Option<yew::AppHandle<C>>,
}

impl<C: yew::BaseComponent> Mounted<C> {
    /// Renders `C` with `props`; the render metrics of any test before are
    /// gone, so a metric read is this test's own.
    pub fn with_props(props: C::Properties) -> Self {
        let window = gloo_utils::window();
        let _ = js_sys::Reflect::delete_property(&window, &"__lobbyMetrics".into());
        let document = gloo_utils::document();
        let root = document.create_element("div").unwrap();
        document.body().unwrap().append_child(&root).unwrap();
        let app = yew::Renderer::<C>::with_root_and_props(root.clone(), props).render();
        Self {
            root,
            app: Some(app),
        }
    }
}

impl<C: yew::BaseComponent> Mounted<C>
where
    C::Properties: Default,
{
    /// Renders `C` with its default properties.
    pub fn new() -> Self {
        Self::with_props(C::Properties::default())
    }
}

impl<C: yew::BaseComponent> Drop for Mounted<C> {
    fn drop(&mut self) {
        if let Some(app) = self.app.take() {
            app.destroy();
        }
        self.root.remove();
    }
}

/// Gives `state` the list message `message`, as the page's connection
/// would: applied to the list's store, then shown.
pub fn feed(
    state: &yew::UseReducerHandle<frontend::state::State>,
    message: frontend::services::connection::ListMessage,
) {
    let now = js_sys::Date::now();
    let list = &mut state.list.clone();
    if let Some(action) = frontend::state::events::receive(list, message, now, 0.0) {
        state.dispatch(action);
    }
}
