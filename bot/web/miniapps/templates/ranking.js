K.ready((spec, state) => {
  const rows = Array.isArray(state.rows) ? state.rows : spec.rows.map((row) => spec.columns.map((_, i) => row[i] || ""));
  let order = { column: -1, up: true };
  const value = (cell) => { const n = parseFloat(String(cell).replace(",", ".")); return Number.isNaN(n) ? String(cell).toLowerCase() : n; };
  const head = document.getElementById("head");
  head.replaceChildren(...spec.columns.map((name, column) => {
    const cell = K.el("th");
    const button = K.el("button", name);
    button.type = "button";
    if (column === spec.columns.length - 1) button.dataset.main = "yes";
    button.addEventListener("click", () => {
      order = { column: column, up: order.column === column ? !order.up : false };
      rows.sort((a, b) => { const x = value(a[column]), y = value(b[column]); const c = x < y ? -1 : x > y ? 1 : 0; return order.up ? c : -c; });
      K.save("rows", rows);
      draw();
    });
    cell.append(button);
    return cell;
  }));
  const draw = () => {
    document.getElementById("rows").replaceChildren(...rows.map((row, r) => {
      const line = K.el("tr");
      row.forEach((cell, column) => {
        const td = K.el("td");
        const input = document.createElement("input");
        input.value = cell;
        input.setAttribute("aria-label", spec.columns[column] + " " + (r + 1));
        input.addEventListener("change", () => { row[column] = input.value.slice(0, 80); K.save("rows", rows); });
        td.append(input);
        line.append(td);
      });
      return line;
    }));
  };
  document.getElementById("add").addEventListener("submit", (event) => {
    event.preventDefault();
    const input = document.getElementById("new-row");
    if (!input.value.trim()) return;
    rows.push([input.value.trim().slice(0, 80), ...spec.columns.slice(1).map(() => "")]);
    input.value = "";
    K.save("rows", rows);
    draw();
  });
  draw();
});
