// The words the pages' markup holds of its own: the text between JSX tags and the string attributes people read,
// as TypeScript parses them. Prints {"file": ["text", ...]} for the .tsx files given as arguments.
import { readFileSync } from "node:fs";
import ts from "typescript";

const READ = new Set(["aria-label", "alt", "title", "placeholder", "label"]);
const found = {};
for (const file of process.argv.slice(2)) {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true, ts.ScriptKind.TSX);
  const texts = [];
  const visit = (node) => {
    if (ts.isJsxText(node) && node.text.trim()) texts.push(node.text.trim());
    if (ts.isJsxAttribute(node) && READ.has(node.name.getText()) && node.initializer && ts.isStringLiteral(node.initializer))
      texts.push(node.initializer.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  found[file] = texts;
}
console.log(JSON.stringify(found));
