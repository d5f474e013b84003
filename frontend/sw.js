// The lobby's service worker (docs/protocol.md §2.4): shows a pushed event
// as a notification and opens the server's page when it is clicked. Plain
// JavaScript, copied into dist/ by Trunk and served at /sw.js, so its scope
// is the whole site. The sentences come from the page (its i18n table, in
// the player's language), as JSON in the worker's own address
// (`/sw.js?words=…`).
"use strict";

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

function words() {
  try {
    return JSON.parse(new URL(self.location.href).searchParams.get("words") || "{}");
  } catch (e) {
    // Not JSON: the bare facts below.
    return {};
  }
}

// `{}` placeholders filled in order, as the page's i18n table writes them.
function fill(text, args) {
  let i = 0;
  return text.replace(/\{\}/g, () => (i < args.length ? String(args[i++]) : ""));
}

// The push's payload: the event and the server, as the bridge sends it
// (`type` and `data`, or the same fields at the top level).
function read(payload) {
  const data = payload.data && typeof payload.data === "object" ? payload.data : payload;
  const event = String(payload.type || payload.event || data.event || "");
  const key = String(data.key || "");
  const players = data.players || {};
  const url = typeof data.url === "string" && data.url ? data.url : "/server/" + key;
  return {
    event,
    key,
    name: String(data.name || key).slice(0, 200),
    current: Number(players.current) || 0,
    max: Number(players.max) || 0,
    url,
  };
}

self.addEventListener("push", (event) => {
  event.waitUntil((async () => {
    let payload = {};
    try {
      payload = event.data ? event.data.json() : {};
    } catch (e) {
      payload = {};
    }
    const p = read(payload);
    const w = words();
    const text = w[p.event];
    const body = text ? fill(text, [p.current, p.max]) : p.event + " " + p.current + "/" + p.max;
    // The same tag as the open tab gives the same event: one replaces the
    // other, never a second notification.
    const tag = p.key + ":" + p.event;
    await self.registration.showNotification(p.name, {
      body,
      tag,
      lang: w.lang || "",
      data: { url: p.url, key: p.key, event: p.event, at: Date.now() },
    });
  })());
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const data = event.notification.data || {};
  // Only the lobby's own pages: a payload cannot send the player elsewhere.
  let target = new URL(data.url || "/", self.location.origin);
  if (target.origin !== self.location.origin) {
    target = new URL("/server/" + encodeURIComponent(data.key || ""), self.location.origin);
  }
  event.waitUntil((async () => {
    const tabs = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
    for (const tab of tabs) {
      const at = new URL(tab.url);
      if (at.origin === target.origin && at.pathname === target.pathname && "focus" in tab) {
        return tab.focus();
      }
    }
    return self.clients.openWindow(target.href);
  })());
});
