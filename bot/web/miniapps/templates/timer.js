K.ready((spec) => {
  let round = 1, working = true, left = spec.work_minutes * 60, running = null;
  const total = () => (working ? spec.work_minutes : spec.break_minutes) * 60;
  const draw = () => {
    const m = Math.floor(left / 60), s = left % 60;
    document.getElementById("clock").textContent = String(m).padStart(2, "0") + ":" + String(s).padStart(2, "0");
    document.getElementById("phase").textContent = working ? "Focus" : "Break";
    document.getElementById("round").textContent = "Round " + round + " of " + spec.rounds;
    document.getElementById("bar").style.width = (100 - (left / Math.max(total(), 1)) * 100) + "%";
    document.getElementById("start").textContent = running ? "Pause" : "Start";
  };
  const tick = () => {
    left -= 1;
    if (left <= 0) {
      if (!working || spec.break_minutes === 0) round += 1;
      working = spec.break_minutes === 0 ? true : !working;
      if (round > spec.rounds) { clearInterval(running); running = null; round = spec.rounds; working = true; }
      left = total();
    }
    draw();
  };
  document.getElementById("start").addEventListener("click", () => {
    if (running) { clearInterval(running); running = null; } else { running = setInterval(tick, 1000); }
    draw();
  });
  document.getElementById("reset").addEventListener("click", () => {
    clearInterval(running); running = null; round = 1; working = true; left = total(); draw();
  });
  draw();
});
