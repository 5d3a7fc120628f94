// The drawn wheel (SVG): each slice's angle proportional to its weight, so what the eye sees is the odds. A spin
// turns the wheel until the slice the SERVER chose stops under the pointer: the animation only shows an outcome
// already decided and paid.

const NS = "http://www.w3.org/2000/svg";
const RADIUS = 100;
const SPIN_MS = 3200;
/** Light slices under dark text: readable in both themes (contrast over 9:1). */
const COLORS = ["#ffd8a8", "#a5d8ff", "#b2f2bb", "#d0bfff", "#ffc9c9", "#99e9f2", "#ffec99", "#eebefa"];

let spans: Array<[number, number]> = [];
let rotation = 0;
let drawnKey = "";

/** Each slice's [start, end) in degrees, clockwise from the top. */
export function sliceAngles(weights: readonly number[]): Array<[number, number]> {
  const total = weights.reduce((a, b) => a + b, 0) || 1;
  let at = 0;
  return weights.map((w) => {
    const start = at;
    at += (360 * w) / total;
    return [start, at];
  });
}

const point = (deg: number, r: number) => {
  const rad = (deg * Math.PI) / 180;
  return `${(r * Math.sin(rad)).toFixed(3)} ${(-r * Math.cos(rad)).toFixed(3)}`;
};

function el<K extends keyof SVGElementTagNameMap>(name: K, attrs: Record<string, string>): SVGElementTagNameMap[K] {
  const node = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}

/** Draws the slices (again only when the segments changed, so a redraw never jumps the wheel). */
export function drawWheel(rotor: SVGGElement, slices: ReadonlyArray<{ label: string; weight: number }>): void {
  const key = JSON.stringify(slices);
  if (key === drawnKey) return;
  drawnKey = key;
  spans = sliceAngles(slices.map((s) => s.weight));
  rotor.replaceChildren(
    ...slices.flatMap((s, i) => {
      const [a0, a1] = spans[i]!;
      const color = COLORS[i % COLORS.length]!;
      const shape =
        a1 - a0 >= 359.999
          ? el("circle", { r: String(RADIUS), fill: color })
          : el("path", {
              d: `M0 0 L${point(a0, RADIUS)} A${RADIUS} ${RADIUS} 0 ${a1 - a0 > 180 ? 1 : 0} 1 ${point(a1, RADIUS)} Z`,
              fill: color,
              stroke: "#1f2328",
              "stroke-width": "0.8",
            });
      shape.dataset.segment = String(i);
      // The label along the slice's middle ray, read outward on the right half and inward on the left (never upside down).
      const mid = (a0 + a1) / 2;
      const left = mid > 180;
      const size = Math.max(5.5, Math.min(10, 120 / Math.max(6, s.label.length), ((a1 - a0) / 360) * 2 * Math.PI * 62 * 0.8));
      const text = el("text", {
        transform: `rotate(${(left ? mid + 90 : mid - 90).toFixed(3)}) translate(${left ? -60 : 60} 0)`,
        "text-anchor": "middle",
        "dominant-baseline": "central",
        "font-size": size.toFixed(2),
        fill: "#1f2328",
      });
      text.textContent = s.label;
      return [shape, text];
    }),
  );
  rotor.style.transition = "none";
  rotor.style.transform = `rotate(${rotation}deg)`;
}

export const reducedMotion = () => matchMedia("(prefers-reduced-motion: reduce)").matches;

/**
 * Turns the wheel (several full turns, then on) until slice `index` stops under the pointer, somewhere inside it;
 * resolves when it has stopped. Records the stop on the SVG: data-rotation (degrees) and data-segment.
 */
export function spinTo(svg: SVGSVGElement, rotor: SVGGElement, index: number): Promise<void> {
  const [a0, a1] = spans[index] ?? [0, 0];
  // Not on a slice's edge: the stop is inside the middle 60 % of the slice.
  const within = a0 + (a1 - a0) * (0.2 + 0.6 * (crypto.getRandomValues(new Uint32Array(1))[0]! / 2 ** 32));
  const current = ((rotation % 360) + 360) % 360;
  const target = (((-within % 360) + 360) % 360) - current;
  rotation += (target < 0 ? target + 360 : target) + 360 * 5;
  svg.dataset.rotation = rotation.toFixed(3);
  svg.dataset.segment = String(index);
  const instant = reducedMotion();
  rotor.style.transition = instant ? "none" : `transform ${SPIN_MS}ms cubic-bezier(0.12, 0.7, 0.16, 1)`;
  rotor.getBoundingClientRect(); // the old transform is the transition's start
  rotor.style.transform = `rotate(${rotation}deg)`;
  if (instant) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      rotor.removeEventListener("transitionend", done);
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(done, SPIN_MS + 300);
    rotor.addEventListener("transitionend", done);
  });
}

/** The pointer and the hub, drawn once; the rotor is what turns. */
export function wheelFrame(svg: SVGSVGElement): SVGGElement {
  const rotor = el("g", { id: "rotor" });
  svg.replaceChildren(
    el("circle", { r: String(RADIUS + 4), style: "fill: var(--card); stroke: var(--text); stroke-width: 2" }),
    rotor,
    el("circle", { r: "13", style: "fill: var(--button); stroke: var(--bg); stroke-width: 2" }),
    el("path", { d: "M-9 -112 L9 -112 L0 -90 Z", style: "fill: var(--danger); stroke: var(--bg); stroke-width: 1.5" }),
  );
  return rotor;
}
