// Meridian home: nothing but the shared chrome.
