// Start the open-source browserless server (SSPL: a test tool here, never shipped) with only
// its Chromium routes: its stock start refuses to run without Chrome, Edge, Firefox and WebKit.
// Run from the folder holding node_modules/@browserless.io/browserless; HOST, PORT and TOKEN
// come from the environment, and PLAYWRIGHT_BROWSERS_PATH must hold a Playwright Chromium.
import { Browserless, BrowserlessRoutes } from "@browserless.io/browserless";

const otherBrowsers = Object.values(BrowserlessRoutes).filter((name) => /^(Chrome|Edge|Firefox|WebKit)/.test(name));
const browserless = new Browserless();
browserless.disableRoutes(...otherBrowsers);
for (const signal of ["SIGTERM", "SIGINT"]) {
  process.once(signal, async () => {
    await browserless.stop();
    process.exit(0);
  });
}
await browserless.start();
console.log("browserless ready");
