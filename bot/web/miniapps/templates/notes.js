K.ready((spec, state) => {
  const entries = Array.isArray(state.entries) ? state.entries : [];
  document.getElementById("prompt").textContent = spec.prompt;
  document.getElementById("entry").placeholder = spec.placeholder;
  const draw = () => {
    document.getElementById("entries").replaceChildren(...entries.slice().reverse().map((entry) => {
      const item = K.el("li");
      item.append(K.el("span", entry.day, "chip"), K.el("span", entry.text));
      return item;
    }));
  };
  document.getElementById("save").addEventListener("click", () => {
    const box = document.getElementById("entry");
    const text = box.value.trim();
    if (!text) return;
    entries.push({ day: K.day(), text: text.slice(0, 2000) });
    box.value = "";
    K.save("entries", entries);
    draw();
  });
  draw();
});
