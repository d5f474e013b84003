//! One answer of the admin API as a section of `/admin` shows it: read
//! whenever what it depends on changes (the tab signing in, the servers a
//! preview shows), read again on demand, and why it could not be read.
//! The webhooks, Web Push and the status card's preview all fetch through
//! it.

use std::{cell::Cell, future::Future, rc::Rc};

use gloo_timers::future::TimeoutFuture;
use wasm_bindgen_futures::spawn_local;
use yew::prelude::*;

use super::api::ApiFailure;

/// What [`use_admin_answer`] gives a section.
pub struct AdminAnswer<T> {
    /// The last answer read (kept while a new one is read).
    pub answer: Option<Rc<T>>,
    /// Why the last read, or the section's last request, failed; cleared
    /// by the next answer read.
    pub failed: UseStateHandle<Option<String>>,
    /// Reads the answer again.
    pub reload: Callback<()>,
}

/// Reads the answer `fetch` gives for `deps` when the component mounts
/// and whenever `deps` changes (`fetch` returns `None` when there is
/// nothing to read, such as before the tab signs in). A read is sent only
/// once `deps` has stayed as it is for `settle_ms` (typing in a field
/// sends one request, not one per key: the admin API is paid from the
/// address's budget like every `/api/` request), and an answer to an
/// earlier read that arrives after a later one is dropped.
#[hook]
pub fn use_admin_answer<T, D, F, Fut>(deps: D, settle_ms: u32, fetch: F) -> AdminAnswer<T>
where
    T: 'static,
    D: PartialEq + Clone + 'static,
    F: Fn(D) -> Option<Fut> + 'static,
    Fut: Future<Output = Result<T, ApiFailure>> + 'static,
{
    let answer = use_state(|| None::<Rc<T>>);
    let failed = use_state(|| None::<String>);
    let latest = use_memo((), |()| Rc::new(Cell::new(0u64)));
    let reload = {
        let (answer, failed, latest) = (answer.clone(), failed.clone(), (*latest).clone());
        use_callback(deps.clone(), move |(), deps: &D| {
            let Some(reading) = fetch(deps.clone()) else {
                return;
            };
            let this = latest.get().wrapping_add(1);
            latest.set(this);
            let (answer, failed, latest) = (answer.clone(), failed.clone(), latest.clone());
            spawn_local(async move {
                if settle_ms > 0 {
                    TimeoutFuture::new(settle_ms).await;
                    if latest.get() != this {
                        return;
                    }
                }
                // Sent only now: the future does nothing until awaited.
                let read = reading.await;
                if latest.get() != this {
                    return;
                }
                match read {
                    Ok(a) => {
                        answer.set(Some(Rc::new(a)));
                        failed.set(None);
                    }
                    Err(r) => failed.set(Some(r.words())),
                }
            });
        })
    };
    {
        let reload = reload.clone();
        use_effect_with(deps, move |_| reload.emit(()));
    }
    AdminAnswer {
        answer: (*answer).clone(),
        failed,
        reload,
    }
}
