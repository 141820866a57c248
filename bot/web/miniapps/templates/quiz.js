K.ready((spec, state) => {
  const cards = Array.isArray(state.cards) ? state.cards : spec.cards.map((card) => ({ front: card.front, back: card.back }));
  let index = 0, turned = false;
  const draw = () => {
    const card = cards[index];
    document.getElementById("face").textContent = turned ? card.back : card.front;
    document.getElementById("flip").textContent = turned ? "Show question" : "Turn over";
    document.getElementById("count").textContent = "Card " + (index + 1) + " of " + cards.length;
  };
  document.getElementById("flip").addEventListener("click", () => { turned = !turned; draw(); });
  document.getElementById("next").addEventListener("click", () => { index = (index + 1) % cards.length; turned = false; draw(); });
  document.getElementById("add").addEventListener("submit", (event) => {
    event.preventDefault();
    const front = document.getElementById("front"), back = document.getElementById("back");
    if (!front.value.trim() || !back.value.trim()) return;
    cards.push({ front: front.value.trim().slice(0, 120), back: back.value.trim().slice(0, 120) });
    front.value = ""; back.value = "";
    K.save("cards", cards);
    draw();
  });
  draw();
});
