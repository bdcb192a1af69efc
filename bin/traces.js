#!/usr/bin/env node
import { main } from '../dist/src/cli.js';

main(process.argv).then((code) => {
  process.exitCode = code;
});
