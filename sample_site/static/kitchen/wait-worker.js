/* Harbor Kitchen — dedicated worker: estimates how long the kitchen needs for an order. */
"use strict";

const MINUTES_PER_DISH = { chowder: 6, mussels: 12, fishcakes: 9, tart: 4 };

self.onmessage = (event) => {
  const { id, dishes } = event.data;
  let minutes = 5; // plating and hand-over
  for (const dish of dishes) minutes += MINUTES_PER_DISH[dish] ?? 10;
  self.postMessage({ id, minutes, computedBy: "dedicated worker" });
};
