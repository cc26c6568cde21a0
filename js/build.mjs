// Bundle js/src/*.js into js/widget.js, the one ES module anywidget loads (and the standalone
// HTML page inlines). js/widget.js is committed: run `npm run build` after changing js/src,
// and tests/js/bundle.test.mjs fails when the two disagree.
//
//   node js/build.mjs            # writes js/widget.js
//   import { bundle } from "./build.mjs"; await bundle()   // the text, written nowhere
import { build } from "esbuild";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const ENTRY = fileURLToPath(new URL("./src/index.js", import.meta.url));
export const OUTPUT = fileURLToPath(new URL("./widget.js", import.meta.url));

const BANNER =
  "// durable_debug's time-travel widget, bundled from js/src/ by js/build.mjs (esbuild).\n" +
  "// Do not edit: change js/src/ and run `npm run build`.";

/** The bundle's text. */
export async function bundle() {
  const result = await build({
    entryPoints: [ENTRY],
    bundle: true,
    format: "esm",
    target: "es2022",
    charset: "utf8",
    legalComments: "none",
    banner: { js: BANNER },
    write: false,
  });
  return result.outputFiles[0].text;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(OUTPUT, await bundle());
}
