#!/usr/bin/env node
import '../dist/src/v8-tuning.js';
import { main } from '../dist/src/cli.js';

main(process.argv).then((code) => {
  process.exitCode = code;
});
