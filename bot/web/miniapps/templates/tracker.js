K.ready((spec, state) => {
  const days = state.days && typeof state.days === "object" ? state.days : {};
  document.getElementById("habit").textContent = spec.habit;
  document.getElementById("unit").textContent = spec.unit;
  document.getElementById("goal").textContent = "of " + spec.goal;
  const draw = () => {
    const today = Number(days[K.day(0)] || 0);
    document.getElementById("today").textContent = String(Math.round(today * 100) / 100);
    document.getElementById("bar").style.width = Math.min(100, (today / spec.goal) * 100) + "%";
    const week = [];
    for (let offset = 0; offset < 7; offset += 1) {
      const key = K.day(offset);
      week.push(K.el("li", key + ": " + Number(days[key] || 0) + " " + spec.unit));
    }
    document.getElementById("week").replaceChildren(...week);
  };
  const change = (sign) => {
    const key = K.day(0);
    days[key] = Math.max(0, Number(days[key] || 0) + sign * spec.step);
    K.save("days", days);
    draw();
  };
  document.getElementById("more").addEventListener("click", () => change(1));
  document.getElementById("less").addEventListener("click", () => change(-1));
  draw();
});
