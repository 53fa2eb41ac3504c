// Meridian Workspace — a task board (single page): columns, cards, the edit dialog, WebMCP tools.
(function () {
  "use strict";
  var $ = mrd.$, h = mrd.h;
  var NAMES = { todo: "To do", doing: "In progress", done: "Done" };
  var tasks = [];
  var editing = null;

  function column(name) { return $('.column[data-column="' + name + '"] .cards'); }

  function counts() {
    Object.keys(NAMES).forEach(function (c) {
      $('[data-count="' + c + '"]').textContent = String(tasks.filter(function (t) { return t.column === c; }).length);
    });
    var done = tasks.filter(function (t) { return t.column === "done"; }).length;
    $("#board-summary").textContent = tasks.length + " tasks · " + done + " done";
  }

  function card(t) {
    var edit = h("button", { class: "icon-btn", type: "button", "aria-label": "Edit " + t.id,
      html: '<svg class="i" viewBox="0 0 24 24" aria-hidden="true"><path d="M4 20h4L20 8l-4-4L4 16z"/></svg>' });
    edit.addEventListener("click", function () { open(t); });
    return h("article", { class: "task", id: "task-" + t.id, "data-id": t.id }, [
      h("div", {}, [
        h("div", { class: "meta", text: t.id + " · " + t.points + " pts" }),
        h("strong", { text: t.title }),
        h("div", { class: "who", text: "Assigned to " + t.assignee }),
      ]),
      edit,
    ]);
  }

  function render() {
    Object.keys(NAMES).forEach(function (c) {
      column(c).replaceChildren.apply(column(c), tasks.filter(function (t) { return t.column === c; }).map(card));
    });
    counts();
  }

  function open(t) {
    editing = t;
    $("#edit-name").value = t.title;
    $("#edit-column").value = t.column;
    $("#edit-task").showModal();
  }

  function move(id, to) {
    var task = tasks.find(function (t) { return t.id === id; });
    if (!task) return Promise.reject(new Error("No task " + id));
    if (!NAMES[to]) return Promise.reject(new Error("column must be one of todo, doing, done"));
    return mrd.json("/api/tasks/" + encodeURIComponent(id) + "/move", { body: { column: to } }).then(function (r) {
      var from = task.column;
      task.column = r.column;
      column(r.column).appendChild($("#task-" + id));
      counts();
      mrd.toast("Moved " + id + " to " + NAMES[r.column]);
      return { id: id, from: from, to: r.column };
    });
  }

  $("#edit-cancel").addEventListener("click", function () { $("#edit-task").close(); });
  $("#edit-form").addEventListener("submit", function () {
    if (!editing) return;
    editing.title = $("#edit-name").value;
    $("#task-" + editing.id + " strong").textContent = editing.title;
    if ($("#edit-column").value !== editing.column) move(editing.id, $("#edit-column").value);
  });
  $("#board-filter").addEventListener("input", function (e) {
    var q = e.target.value.toLowerCase();
    mrd.$$(".task").forEach(function (n) { n.hidden = q && n.textContent.toLowerCase().indexOf(q) < 0; });
  });

  // The tools come once the data is there: an agent never sees an empty catalogue.
  function registerTools() {
    mrd.tool({
      name: "list_tasks",
      title: "List tasks",
      description: "List the board's tasks, optionally only those of one column.",
      inputSchema: {
        type: "object",
        properties: { column: { type: "string", enum: ["todo", "doing", "done"], description: "Only this column" } },
      },
      annotations: { readOnlyHint: true },
      execute: async function (input) {
        var list = tasks.filter(function (t) { return !input.column || t.column === input.column; });
        return { tasks: list.map(function (t) { return { id: t.id, title: t.title, column: t.column, assignee: t.assignee }; }) };
      },
    });

    mrd.tool({
      name: "move_task",
      title: "Move task",
      description: "Move a task to another column of the board.",
      inputSchema: {
        type: "object",
        properties: {
          id: { type: "string", description: "Task id, e.g. T-105" },
          column: { type: "string", enum: ["todo", "doing", "done"], description: "Where to put it" },
        },
        required: ["id", "column"],
      },
      execute: async function (input) { return move(String(input.id || ""), String(input.column || "")); },
    });
  }

  mrd.json("/api/tasks").then(function (r) { tasks = r.tasks; render(); registerTools(); })
    .catch(function (e) { $("#board-summary").textContent = "Could not load the board: " + e.message; });
})();
