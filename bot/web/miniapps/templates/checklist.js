K.ready((spec, state) => {
  const items = Array.isArray(state.items) ? state.items : spec.items.map((item) => ({ text: item.text, done: !!item.done }));
  const list = document.getElementById("items");
  const draw = () => {
    list.replaceChildren(...items.map((item, index) => {
      const row = K.el("li", null, item.done ? "done" : "");
      const box = document.createElement("input");
      box.type = "checkbox";
      box.id = "item-" + index;
      box.checked = item.done;
      if (index === 0) box.dataset.main = "yes";
      box.addEventListener("change", () => { item.done = box.checked; K.save("items", items); draw(); });
      const label = K.el("label", item.text);
      label.htmlFor = box.id;
      row.append(box, label);
      return row;
    }));
    const done = items.filter((item) => item.done).length;
    document.getElementById("progress").textContent = done + " of " + items.length + " done";
  };
  document.getElementById("add").addEventListener("submit", (event) => {
    event.preventDefault();
    const input = document.getElementById("new-item");
    const text = input.value.trim();
    if (!text) return;
    items.push({ text: text.slice(0, 120), done: false });
    input.value = "";
    K.save("items", items);
    draw();
  });
  draw();
});
