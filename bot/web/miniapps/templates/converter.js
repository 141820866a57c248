K.ready((spec) => {
  document.getElementById("quantity").textContent = spec.quantity;
  const from = document.getElementById("from");
  spec.units.forEach((unit, index) => { const option = K.el("option", unit.name); option.value = String(index); from.append(option); });
  const convert = () => {
    const amount = parseFloat(document.getElementById("amount").value);
    const source = spec.units[Number(from.value) || 0];
    const base = amount * source.factor + (source.offset || 0);
    document.getElementById("results").replaceChildren(...spec.units.map((unit) => {
      const value = (base - (unit.offset || 0)) / unit.factor;
      return K.el("li", Number.isFinite(value) ? Number(value.toPrecision(6)) + " " + unit.name : "—");
    }));
  };
  document.getElementById("convert").addEventListener("click", convert);
  document.getElementById("amount").addEventListener("input", convert);
  from.addEventListener("change", convert);
  convert();
});
