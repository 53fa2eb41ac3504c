/* Harbor Kitchen — shared worker: one ticket rail for every open kitchen display. */
"use strict";

const rail = [];

self.onconnect = (event) => {
  const port = event.ports[0];
  port.onmessage = (message) => {
    const { id, add } = message.data;
    if (add) rail.push(add);
    port.postMessage({ id, tickets: rail.slice(), computedBy: "shared worker" });
  };
  port.start();
};
