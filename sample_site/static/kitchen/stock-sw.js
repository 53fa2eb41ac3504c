/* Harbor Kitchen — service worker that keeps the pantry's stock levels. */
"use strict";

const PORTIONS = { chowder: 18, mussels: 7, fishcakes: 11, tart: 4 };

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));
self.addEventListener("message", (event) => {
  const { dish } = event.data;
  event.ports[0].postMessage({ dish, portions: PORTIONS[dish] ?? 0, computedBy: "service worker" });
});
