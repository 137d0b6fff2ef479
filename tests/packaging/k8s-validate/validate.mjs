// SPDX-License-Identifier: GPL-2.0-only
// Validates Kubernetes manifests offline, as an API server with strict field
// validation would:
//   node validate.mjs FILE.yaml...
// Every YAML document is checked twice:
//  - against the API's OpenAPI schema (kubernetes-models ships it compiled:
//    types, required fields, enums, formats);
//  - for unknown fields, which those schemas let through but
//    `kubectl apply --validate=strict` rejects: the document becomes a typed
//    TypeScript object literal, and tsc's excess-property check names any
//    field the API does not have (a misspelt `readOnlyRootFilesytem` would
//    otherwise silently leave the root file system writable).
// Prints one line per problem ("FILE: doc N KIND/NAME: problem") and exits 1
// when there is any, 0 when every document is valid.
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import ts from "typescript";

// API group → the package holding its models; core groups are in kubernetes-models.
const crdPackages = {
  "monitoring.coreos.com": "@kubernetes-models/prometheus-operator",
};

function modelModule(apiVersion, kind) {
  const group = apiVersion.includes("/") ? apiVersion.split("/")[0] : "";
  const pkg = crdPackages[group] ?? "kubernetes-models";
  return `${pkg}/${apiVersion}/${kind}`;
}

function docLabel(file, index, doc) {
  const name = doc?.metadata?.name ?? "(no name)";
  return `${file}: doc ${index + 1} ${doc?.kind ?? "(no kind)"}/${name}`;
}

async function schemaProblems(doc) {
  if (typeof doc?.apiVersion !== "string" || typeof doc?.kind !== "string")
    return ["apiVersion and kind must be strings"];
  let mod;
  try {
    mod = await import(modelModule(doc.apiVersion, doc.kind));
  } catch {
    return [`no schema for ${doc.apiVersion} ${doc.kind}`];
  }
  const Model = mod[doc.kind];
  try {
    new Model(doc).validate();
  } catch (e) {
    return e.message.split(", ");
  }
  return [];
}

// One TypeScript source with a typed constant per document; tsc's
// diagnostics come back per document (by line range).
function unknownFieldProblems(docs) {
  let source = "";
  const ranges = [];
  docs.forEach(({ doc }, i) => {
    if (typeof doc?.apiVersion !== "string" || typeof doc?.kind !== "string")
      return;
    const first = source.split("\n").length;
    source += `import type { I${doc.kind} as T${i} } from "${modelModule(doc.apiVersion, doc.kind)}";\n`;
    source += `export const doc${i}: T${i} = ${JSON.stringify(doc, null, 1)};\n`;
    ranges.push({ i, first, last: source.split("\n").length });
  });
  const fileName = new URL("./manifests.check.ts", import.meta.url).pathname;
  const options = {
    strict: true, noEmit: true, skipLibCheck: true, types: [],
    module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
  };
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile;
  host.readFile = (f) => (f === fileName ? source : readFile(f));
  host.fileExists = ((exists) => (f) => f === fileName || exists(f))(host.fileExists);
  host.getSourceFile = ((get) => (f, lang, ...rest) =>
    f === fileName ? ts.createSourceFile(f, source, lang) : get(f, lang, ...rest))(host.getSourceFile);
  const program = ts.createProgram([fileName], options, host);
  const problems = new Map();
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const text = ts.flattenDiagnosticMessageText(d.messageText, " ");
    let at = -1;
    if (d.file?.fileName === fileName && d.start !== undefined)
      at = d.file.getLineAndCharacterOfPosition(d.start).line + 1;
    const r = ranges.find(({ first, last }) => at >= first && at < last);
    const key = r ? r.i : -1;
    problems.set(key, [...(problems.get(key) ?? []), text]);
  }
  return problems;
}

async function main(files) {
  if (files.length === 0) {
    console.error("usage: node validate.mjs FILE.yaml...");
    return 2;
  }
  let bad = 0;
  const report = (label, problem) => {
    console.log(`${label}: ${problem}`);
    bad++;
  };
  for (const file of files) {
    let text;
    try {
      text = readFileSync(file, "utf8");
    } catch (e) {
      report(file, `cannot read: ${e.message}`);
      continue;
    }
    const docs = [];
    for (const [i, parsed] of parseAllDocuments(text).entries()) {
      if (parsed.errors.length) {
        report(`${file}: doc ${i + 1}`, `YAML: ${parsed.errors[0].message.split("\n")[0]}`);
        continue;
      }
      const doc = parsed.toJS();
      if (doc !== null) docs.push({ i, doc });
    }
    if (docs.length === 0) report(file, "no Kubernetes document");
    for (const { i, doc } of docs)
      for (const p of await schemaProblems(doc)) report(docLabel(file, i, doc), p);
    const unknown = unknownFieldProblems(docs);
    for (const [k, list] of unknown) {
      const label = k >= 0 ? docLabel(file, docs[k].i, docs[k].doc) : file;
      for (const p of list) report(label, p);
    }
  }
  if (bad === 0) console.log(`valid: ${files.join(" ")}`);
  return bad ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
