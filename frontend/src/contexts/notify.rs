//! The notify context: the player's watches (kept in localStorage as they
//! change), the service worker registered when the page loads, and the
//! tab's own notices. After each update of the list (in an effect, never
//! in a render) the tab decides its watches' events from what the update
//! changed (`notify::detect`) and shows each as a system notification
//! under the push's tag, or, without permission, as a toast on the page
//! (`role=status`).

use std::rc::Rc;

use yew::prelude::*;

use crate::components::icon::{Icon, SvgIcon};

use crate::{
    contexts::lobby::use_lobby,
    i18n::{t, K},
    list::store::{ListView, Update},
    notify::{
        self,
        detect::{Detector, TabNotice},
        watches::{subscription_body, Watch},
    },
    route::Route,
    router::{link, use_router},
    services::{browser, metrics, push, storage},
};

/// Toasts kept at most; the oldest goes first.
const MAX_TOASTS: usize = 4;

/// A notice shown on the page.
#[derive(Debug, Clone, PartialEq)]
pub struct Toast {
    pub id: u32,
    pub notice: TabNotice,
}

/// The watches and the toasts.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NotifyState {
    pub watches: Rc<Vec<Watch>>,
    pub toasts: Rc<Vec<Toast>>,
    next_toast: u32,
    /// The last action changed the watches (for the writer).
    dirty: bool,
}

/// Everything that changes [`NotifyState`].
#[derive(Debug, Clone, PartialEq)]
pub enum NotifyAction {
    /// The player's watches, all of them (see `watches::with_watch`).
    SetWatches(Vec<Watch>),
    Toast(TabNotice),
    Dismiss(u32),
}

impl Reducible for NotifyState {
    type Action = NotifyAction;

    fn reduce(self: Rc<Self>, action: NotifyAction) -> Rc<Self> {
        let mut next = (*self).clone();
        next.dirty = false;
        match action {
            NotifyAction::SetWatches(list) => {
                next.watches = Rc::new(list);
                next.dirty = true;
            }
            NotifyAction::Toast(notice) => {
                let mut toasts = (*self.toasts).clone();
                // The same event again replaces its toast, as a tag does.
                toasts.retain(|t| t.notice.tag() != notice.tag());
                toasts.push(Toast {
                    id: self.next_toast,
                    notice,
                });
                let extra = toasts.len().saturating_sub(MAX_TOASTS);
                toasts.drain(..extra);
                next.toasts = Rc::new(toasts);
                next.next_toast = self.next_toast.wrapping_add(1);
            }
            NotifyAction::Dismiss(id) => {
                let mut toasts = (*self.toasts).clone();
                toasts.retain(|t| t.id != id);
                next.toasts = Rc::new(toasts);
            }
        }
        Rc::new(next)
    }
}

/// The watches, the toasts and a way to change them.
pub type NotifyHandle = UseReducerHandle<NotifyState>;

/// Props of [`NotifyProvider`].
#[derive(Properties, PartialEq)]
pub struct NotifyProviderProps {
    #[prop_or_default]
    pub children: Html,
}

/// Provides [`NotifyHandle`], registers the service worker and shows the
/// tab's notices.
#[component]
pub fn NotifyProvider(props: &NotifyProviderProps) -> Html {
    let state = use_reducer(|| NotifyState {
        watches: Rc::new(storage::watches()),
        ..Default::default()
    });
    {
        // The worker, and this browser's push subscription renewed with its
        // watches: the bridge deletes one not renewed for 30 days
        // (`docs/protocol.md` §4.11).
        let watches = state.watches.clone();
        use_effect_with((), move |_| {
            push::register_worker(&notify::words_json());
            if !watches.is_empty() {
                wasm_bindgen_futures::spawn_local(async move {
                    if let Some(sub) = push::existing().await {
                        let _ = push::put_watches(&subscription_body(&sub, &watches)).await;
                    }
                });
            }
        });
    }
    {
        let s = state.clone();
        use_effect_with(state.clone(), move |_| {
            if s.dirty {
                storage::set_watches(&s.watches);
            }
        });
    }
    let lobby = use_lobby();
    // What is listed when the provider starts is learnt then (once: the
    // list the page already holds), so no later update is taken for it.
    let detector = use_mut_ref(|| {
        let mut detector = Detector::default();
        let shown = lobby.state.list.shown();
        if shown.version() > 0 {
            look_at_all(&mut detector, shown, &state.watches, browser::now_ms());
        }
        detector
    });
    // The list's version and the watches the detector last looked at.
    let looked = use_mut_ref(|| (lobby.state.list.version(), state.watches.clone()));
    {
        let list = lobby.state.list.clone();
        let watches = state.watches.clone();
        let dispatcher = state.dispatcher();
        use_effect_with((list.version(), watches.clone()), move |_| {
            let shown = list.shown();
            let version = shown.version();
            // A newer update was applied since this render: its own effect
            // looks (at the whole list, as it misses this one).
            if !shown.is_current() {
                return;
            }
            let (last_version, last_watches) = looked.replace((version, watches.clone()));
            metrics::notices_looked(version);
            // No list yet, or nothing to look for: no work at all.
            if version == 0 || watches.is_empty() {
                return;
            }
            let now = browser::now_ms();
            let rows = shown.rows();
            let mut detector = detector.borrow_mut();
            let notices = match shown.update() {
                Update::Rows { from, changes }
                    if *from == last_version && Rc::ptr_eq(&last_watches, &watches) =>
                {
                    let put = changes.put.iter().filter_map(|&j| rows.get(j));
                    detector.changed(
                        changes.out.iter().filter_map(|(_, row)| row.server),
                        put.filter_map(|row| row.server.map(|k| (k, &*row.entry))),
                        &watches,
                        now,
                    )
                }
                // The first list, a snapshot, a missed version or new
                // watches: the whole list, once.
                _ => {
                    drop(rows);
                    look_at_all(&mut detector, shown, &watches, now)
                }
            };
            for notice in notices {
                let dispatcher = dispatcher.clone();
                metrics::notice_started();
                wasm_bindgen_futures::spawn_local(async move {
                    let body = notify::body(notice.event, notice.current, notice.max);
                    let url = Route::Server(notice.key).path();
                    let tag = notice.tag();
                    if push::show(&notice.name, &body, &tag, &url).await == push::Shown::No {
                        dispatcher.dispatch(NotifyAction::Toast(notice));
                    }
                    metrics::notice_settled(&tag);
                });
            }
        });
    }
    // Made once, so the toasts do not re-render for it.
    let dismiss = {
        let dispatcher = state.dispatcher();
        use_memo((), move |_| {
            Callback::from(move |id: u32| dispatcher.dispatch(NotifyAction::Dismiss(id)))
        })
    };
    html! {
        <ContextProvider<NotifyHandle> context={state.clone()}>
            { props.children.clone() }
            <Toasts toasts={state.toasts.clone()} dismiss={(*dismiss).clone()} />
        </ContextProvider<NotifyHandle>>
    }
}

/// The detector's look at every row of `shown` (the first list, a
/// snapshot, new watches).
fn look_at_all(
    detector: &mut Detector,
    shown: &ListView,
    watches: &[Watch],
    now: f64,
) -> Vec<TabNotice> {
    let rows = shown.rows();
    let listed = rows
        .iter()
        .filter_map(|row| row.server.map(|k| (k, &*row.entry)));
    detector.whole(listed, watches, now)
}

/// Props of [`Toasts`].
#[derive(Properties, PartialEq)]
struct ToastsProps {
    toasts: Rc<Vec<Toast>>,
    /// Takes the toast with this id away.
    dismiss: Callback<u32>,
}

/// The tab's notices when the browser's are not allowed: a live region,
/// so a screen reader reads each as it comes.
#[component]
fn Toasts(props: &ToastsProps) -> Html {
    let router = use_router();
    html! {
        <section class="toasts" role="status" aria-live="polite" aria-label={t(K::NotifyNotices)}
            data-testid="toasts">
            { for props.toasts.iter().map(|toast| {
                let n = &toast.notice;
                let id = toast.id;
                let dismiss = props.dismiss.clone();
                let onclick = Callback::from(move |_: MouseEvent| dismiss.emit(id));
                let name = html! { <strong dir="auto">{ &n.name }</strong> };
                html! {
                    <div class="toast" key={id} data-testid="toast" data-tag={n.tag()}>
                        { link(&router, Route::Server(n.key), classes!("toast-link"), name) }
                        <span class="toast-body">{ notify::body(n.event, n.current, n.max) }</span>
                        <button type="button" class="toast-close" {onclick}
                            aria-label={t(K::NotifyDismiss)}><SvgIcon icon={Icon::Close} /></button>
                    </div>
                }
            }) }
        </section>
    }
}

/// The notify context; panics only when used outside [`NotifyProvider`],
/// which is a programming error, not a runtime condition.
#[hook]
pub fn use_notify() -> NotifyHandle {
    use_context::<NotifyHandle>().expect("use_notify outside NotifyProvider")
}
