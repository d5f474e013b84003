//! The page's icons, drawn as inline SVG in the text's colour: a glyph
//! (an emoji above all) depends on the fonts of the player's machine and
//! shows as a missing-glyph box where it has none. Every icon is
//! decoration: the control it sits in carries the words
//! (`aria-label`), so each is `aria-hidden`.

use yew::prelude::*;

/// One icon of the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Icon {
    /// A bell: "Notify me".
    Bell,
    /// A filled star: a favourite.
    Star,
    /// A star's outline: not a favourite.
    StarOutline,
    /// A cross: close, hide.
    Close,
    /// An arrow turning back: undo a hide.
    Undo,
}

impl Icon {
    /// The icon's path on a 16 × 16 grid, and whether it is drawn as a
    /// line (stroked) rather than filled.
    fn path(self) -> (&'static str, bool) {
        match self {
            Icon::Bell => (
                "M8 1.5a1 1 0 0 1 1 1v.6a4.5 4.5 0 0 1 3.5 4.4v2.8l1.3 1.6a.6.6 0 0 1-.5 1H2.7a.6.6 0 0 1-.5-1l1.3-1.6V7.5A4.5 4.5 0 0 1 7 3.1v-.6a1 1 0 0 1 1-1zM6.3 13.8h3.4a1.7 1.7 0 0 1-3.4 0z",
                false,
            ),
            Icon::Star => (
                "M8 1.2l2.1 4.3 4.7.7-3.4 3.3.8 4.7L8 12l-4.2 2.2.8-4.7-3.4-3.3 4.7-.7z",
                false,
            ),
            Icon::StarOutline => (
                "M8 2.3l1.8 3.7 4 .6-2.9 2.8.7 4L8 11.5l-3.6 1.9.7-4-2.9-2.8 4-.6z",
                true,
            ),
            Icon::Close => ("M4 4l8 8M12 4l-8 8", true),
            Icon::Undo => ("M5.5 3.5L2.5 6.5l3 3M2.8 6.5H10a3.5 3.5 0 0 1 0 7H7", true),
        }
    }
}

/// Props of [`SvgIcon`].
#[derive(Properties, PartialEq)]
pub struct SvgIconProps {
    pub icon: Icon,
}

/// `icon` at the size of the text around it (`1em`), in its colour.
#[component]
pub fn SvgIcon(props: &SvgIconProps) -> Html {
    let (d, line) = props.icon.path();
    let (fill, stroke) = if line {
        ("none", "currentColor")
    } else {
        ("currentColor", "none")
    };
    html! {
        <svg class="icon" viewBox="0 0 16 16" width="16" height="16" aria-hidden="true"
            focusable="false">
            <path {d} fill={fill} stroke={stroke} stroke-width="1.6" stroke-linecap="round"
                stroke-linejoin="round" />
        </svg>
    }
}
