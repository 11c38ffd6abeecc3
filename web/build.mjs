// Bundle src/ into dist/ (app.js, app.css, index.html), minified; the gateway serves dist/ at /.
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { build } from "esbuild";

rmSync("dist", { recursive: true, force: true });
mkdirSync("dist");
await build({
  entryPoints: ["src/main.tsx"],
  outfile: "dist/app.js",
  bundle: true,
  minify: true,
  format: "esm",
  target: ["es2022"],
  jsx: "automatic",
  jsxImportSource: "preact",
  legalComments: "none",
  logLevel: "warning",
});
copyFileSync("src/styles.css", "dist/app.css");
const hash = createHash("sha256")
  .update(readFileSync("dist/app.js"))
  .update(readFileSync("dist/app.css"))
  .digest("hex")
  .slice(0, 12);
// index.html last and whole (renamed into place): a running gateway takes its appearance for a complete build.
writeFileSync("dist/index.html.tmp", readFileSync("src/index.html", "utf8").replaceAll("__HASH__", hash));
renameSync("dist/index.html.tmp", "dist/index.html");
