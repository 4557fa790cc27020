#!/usr/bin/env node
// Starts the computer-control binary of this platform's package (an optional
// dependency npm installs only where its os/cpu/libc match), passing arguments,
// standard streams, signals and the exit status through unchanged.
"use strict";

const { spawn } = require("child_process");

const PACKAGES = {
  "linux x64 glibc": "@computer-control/linux-x64-gnu",
  "linux arm64 glibc": "@computer-control/linux-arm64-gnu",
  "win32 x64": "@computer-control/win32-x64",
};

function libc() {
  if (process.platform !== "linux") return "";
  const header = process.report && process.report.getReport().header;
  return header && header.glibcVersionRuntime ? "glibc" : "musl";
}

function binary() {
  const override = process.env.COMPUTER_CONTROL_BINARY;
  if (override) return override;
  const key = `${process.platform} ${process.arch} ${libc()}`.trim();
  const pkg = PACKAGES[key];
  if (!pkg) {
    fail(
      `computer-control has no prebuilt binary for ${key}. Prebuilt: ` +
        `${Object.keys(PACKAGES).join(", ")}. Elsewhere, build it with ` +
        "`cargo install computer-control --locked`, or set COMPUTER_CONTROL_BINARY " +
        "to a binary you built.",
    );
  }
  try {
    const exe = process.platform === "win32" ? "computer-control.exe" : "computer-control";
    return require.resolve(`${pkg}/bin/${exe}`);
  } catch (e) {
    fail(
      `the package ${pkg} (the binary for ${key}) is not installed. npm skips it ` +
        "with --omit=optional or --no-optional, and older lockfiles can miss it: " +
        `reinstall without those options, or \`npm install ${pkg}\`.`,
    );
  }
}

function fail(message) {
  process.stderr.write(`computer-control: ${message}\n`);
  process.exit(1);
}

const child = spawn(binary(), process.argv.slice(2), { stdio: "inherit", shell: false });
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("error", (e) => fail(`cannot start ${e.path || "the binary"}: ${e.message}`));
child.on("exit", (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else {
    process.exit(code === null ? 1 : code);
  }
});
