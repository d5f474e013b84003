//! The box shown instead of a table: loading, unreachable, nothing listed,
//! everything filtered out.

use yew::prelude::*;

/// Props of [`EmptyState`].
#[derive(Properties, PartialEq)]
pub struct EmptyStateProps {
    pub title: AttrValue,
    pub detail: AttrValue,
    /// A button under the text (`id`, label, action), e.g. "Clear filters".
    #[prop_or_default]
    pub action: Option<(AttrValue, AttrValue, Callback<MouseEvent>)>,
}

/// Says why there is no table and, when the user can change that, how.
#[component]
pub fn EmptyState(props: &EmptyStateProps) -> Html {
    html! {
        <div class="empty" data-testid="empty">
            <p class="empty-title">{ props.title.clone() }</p>
            <p class="muted">{ props.detail.clone() }</p>
            if let Some((id, label, onclick)) = &props.action {
                <button type="button" id={id.clone()} onclick={onclick.clone()}>{ label.clone() }</button>
            }
        </div>
    }
}
