//! A JSON answer of the bridge as a view holds it: loaded once, again
//! whenever the path or a trigger changes, and every so often while the
//! tab is visible. A failed refresh keeps what was shown; only a changed
//! answer re-renders. The answer stays text here (one copy of this code
//! for every kind of answer); each view reads it with `use_memo`.

use std::{cell::Cell, rc::Rc};

use gloo_timers::callback::Interval;
use yew::prelude::*;

use crate::services::{
    api::{get_text, Fetched},
    browser,
};

/// Where an answer stands.
#[derive(Debug, Clone, PartialEq)]
pub enum Load {
    Loading,
    /// The bridge answered 404.
    Missing,
    /// No answer could be read (and none was before).
    Failed,
    /// The last answer read.
    Ready {
        text: Rc<str>,
        /// `performance.now()` when it arrived.
        perf_ms: f64,
        /// `Date.now()` when it arrived: where a graph's time axis ends.
        at_ms: f64,
    },
}

impl Load {
    /// The answer, if one was read.
    pub fn text(&self) -> Option<&Rc<str>> {
        match self {
            Load::Ready { text, .. } => Some(text),
            _ => None,
        }
    }
}

/// The reducer's state: one [`Load`].
#[derive(Debug, PartialEq)]
pub struct Loaded(pub Load);

/// What happens to a [`Loaded`].
pub enum Step {
    /// The path changed: what was loaded is for another path.
    Restart,
    Got(Fetched, f64, f64),
}

impl Reducible for Loaded {
    type Action = Step;

    fn reduce(self: Rc<Self>, action: Step) -> Rc<Self> {
        let next = match action {
            Step::Restart => Load::Loading,
            Step::Got(Fetched::Ok(text), perf_ms, at_ms) => {
                if self.0.text() == Some(&text) {
                    return self;
                }
                Load::Ready {
                    text,
                    perf_ms,
                    at_ms,
                }
            }
            Step::Got(Fetched::Missing, ..) => Load::Missing,
            Step::Got(Fetched::Failed, ..) if self.0.text().is_some() => return self,
            Step::Got(Fetched::Failed, ..) => Load::Failed,
        };
        Rc::new(Loaded(next))
    }
}

/// `path`'s answer: fetched now, again when `path`, `again` or
/// `every_ms` changes, and every `every_ms` while the tab is visible. A new
/// path starts over (nothing of the old path's answer shows for it); no
/// path asks for nothing (an answer that would only say `404`) and stays
/// [`Load::Loading`].
#[hook]
pub fn use_fetch(path: Option<String>, again: u32, every_ms: u32) -> Load {
    let loaded = use_reducer_eq(|| Loaded(Load::Loading));
    let last_path = use_mut_ref(String::new);
    {
        let dispatcher = loaded.dispatcher();
        use_effect_with((path, again, every_ms), move |(path, _, every_ms)| {
            let path = path.clone().unwrap_or_default();
            let moved = *last_path.borrow() != path;
            if moved {
                if !last_path.borrow().is_empty() {
                    dispatcher.dispatch(Step::Restart);
                }
                last_path.borrow_mut().clone_from(&path);
            }
            let alive = Rc::new(Cell::new(true));
            if path.is_empty() {
                return Box::new(move || alive.set(false)) as Box<dyn FnOnce()>;
            }
            let fetch = {
                let (path, alive) = (path.clone(), alive.clone());
                move || {
                    let (path, alive, dispatcher) =
                        (path.clone(), alive.clone(), dispatcher.clone());
                    wasm_bindgen_futures::spawn_local(async move {
                        let got = get_text(&path).await;
                        if alive.get() {
                            dispatcher.dispatch(Step::Got(
                                got,
                                browser::perf_now(),
                                browser::now_ms(),
                            ));
                        }
                    });
                }
            };
            fetch();
            let timer = Interval::new(*every_ms, move || {
                if !browser::tab_hidden() {
                    fetch();
                }
            });
            Box::new(move || {
                alive.set(false);
                drop(timer);
            })
        });
    }
    loaded.0.clone()
}
