K.ready((spec, state) => {
  let target = typeof state.target === "string" ? state.target : spec.target;
  document.getElementById("label").textContent = spec.label;
  const input = document.getElementById("target");
  input.value = target.slice(0, 10);
  const draw = () => {
    const when = new Date(target.length === 10 ? target + "T00:00" : target);
    const ms = Math.max(0, when.getTime() - Date.now());
    const days = Math.floor(ms / 86400000);
    document.getElementById("days").textContent = String(days);
    document.getElementById("days-word").textContent = days === 1 ? "day" : "days";
    const h = Math.floor((ms % 86400000) / 3600000), m = Math.floor((ms % 3600000) / 60000);
    document.getElementById("rest").textContent = ms === 0 ? "It's here!" : "and " + h + " h " + m + " min, until " + when.toDateString();
  };
  document.getElementById("change").addEventListener("submit", (event) => {
    event.preventDefault();
    if (!/^\d{4}-\d{2}-\d{2}$/.test(input.value)) return;
    target = input.value;
    K.save("target", target);
    draw();
  });
  draw();
  setInterval(draw, 30000);
});
