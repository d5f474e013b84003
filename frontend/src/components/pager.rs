//! Previous/next paging for long lists.

use yew::prelude::*;

use crate::i18n::{t, tf, K};

/// Props of [`Pager`].
#[derive(Properties, PartialEq)]
pub struct PagerProps {
    /// Zero-based current page.
    pub page: usize,
    pub pages: usize,
    pub on_page: Callback<usize>,
}

/// Hidden when everything fits on one page.
#[component]
pub fn Pager(props: &PagerProps) -> Html {
    if props.pages <= 1 {
        return html! {};
    }
    let go = |p: usize| {
        let cb = props.on_page.clone();
        Callback::from(move |_: MouseEvent| cb.emit(p))
    };
    html! {
        <nav class="pager" aria-label={t(K::Pages)}>
            <button type="button" id="page-prev" disabled={props.page == 0}
                onclick={go(props.page.saturating_sub(1))}>{ t(K::Previous) }</button>
            <span data-testid="page">{ tf(K::PageOf, &[&(props.page + 1), &props.pages]) }</span>
            <button type="button" id="page-next" disabled={props.page + 1 >= props.pages}
                onclick={go(props.page + 1)}>{ t(K::Next) }</button>
        </nav>
    }
}
