// The tools a frame registered itself (not those of its child frames), as plain data (desktop/mirror.py).
async () => {
  const mc = document.modelContext;
  if (!mc || typeof mc.getTools !== "function") return [];
  const tools = await mc.getTools();
  return tools.filter((t) => t.window === window).map((t) => ({
    name: String(t.name), description: String(t.description || ""), inputSchema: t.inputSchema || undefined,
  }));
}
