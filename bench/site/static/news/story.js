// Meridian News — story page: pictures, highlights, and its WebMCP tools.
(function () {
  "use strict";
  var $ = mrd.$;
  var story = $("#story");

  function paragraphs() { return mrd.$$("p", story).filter(function (p) { return !p.className; }); }

  function showHighlights(list) {
    $("#highlights").replaceChildren.apply($("#highlights"), list.map(function (t) {
      return mrd.h("li", {}, [mrd.h("blockquote", { text: t })]);
    }));
    $("#hl-empty").hidden = list.length > 0;
  }

  mrd.$$("img[data-src]").forEach(function (img) { img.src = mrd.cdn + "/img/" + img.dataset.src + ".svg"; });
  mrd.$$("img[data-hold]").forEach(function (img) { img.src = mrd.cdn + "/img/hold/" + img.dataset.hold; });

  mrd.tool({
    name: "get_article",
    title: "Get article",
    description: "The story's headline, byline, publication time and how many paragraphs it has.",
    inputSchema: { type: "object", properties: {} },
    annotations: { readOnlyHint: true },
    execute: async function () {
      return {
        title: $("#headline").textContent,
        byline: $("#byline").textContent,
        published: $("time", story).getAttribute("datetime"),
        paragraphs: paragraphs().length,
        comments: 38,
      };
    },
  });

  mrd.tool({
    name: "save_highlight",
    title: "Save highlight",
    description: "Save a passage of the story to the reader's highlights. The text must be quoted from the story.",
    inputSchema: {
      type: "object",
      properties: { text: { type: "string", minLength: 1, description: "A passage of the story, word for word" } },
      required: ["text"],
    },
    execute: async function (input) {
      var text = String(input.text || "").trim();
      if (!text) throw new Error("text must not be empty");
      if (story.textContent.replace(/\s+/g, " ").indexOf(text) < 0) throw new Error("That text is not in the story");
      var r = await mrd.json("/api/highlights", { body: { text: text } });
      showHighlights(r.highlights);
      mrd.toast("Highlight saved");
      return { saved: text, highlights: r.highlights.length };
    },
  });

  mrd.json("/api/highlights").then(function (r) { showHighlights(r.highlights); });
})();
