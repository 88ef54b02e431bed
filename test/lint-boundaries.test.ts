import { execFile } from 'node:child_process';
import { describe, expect, it } from '@jest/globals';
import { REPO_ROOT } from './support/argus-process.js';

/** One import written into a file at `file` (which need not exist), and whether `npm run lint` must refuse it. */
interface Case {
  file: string;
  from: string;
  refused: boolean;
}

/**
 * The messages ESLint (the project's own configuration) gives each case, linted in one child process: jest's module
 * sandbox is not where ESLint's plugins expect to run.
 */
function lint(cases: Case[]): Promise<string[][]> {
  const script = `
    import { ESLint } from 'eslint';
    const cases = JSON.parse(process.argv[1]);
    const eslint = new ESLint({ cwd: process.cwd() });
    const out = [];
    for (const c of cases) {
      const [result] = await eslint.lintText(\`import * as it from '\${c.from}';\\nexport const used = it;\\n\`, { filePath: c.file });
      out.push(result.messages.map((m) => \`\${m.ruleId}: \${m.message}\`));
    }
    process.stdout.write(JSON.stringify(out));
  `;
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      ['--input-type=module', '-e', script, JSON.stringify(cases)],
      { cwd: REPO_ROOT, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
    ),
  );
}

const CASES: Record<string, Case[]> = {
  'a service never imports another service': [
    { file: 'services/alert-dispatch/zz.ts', from: '../dataprep/config.js', refused: true },
    { file: 'services/caption-qa/routes/zz.ts', from: '../../frame-analysis/errors.js', refused: true },
    { file: 'services/alert-dispatch/zz.ts', from: '../lib/log/index.js', refused: false },
  ],
  'a service uses the control plane only through ports, api and service-control-plane.ts': [
    { file: 'services/dataprep/zz.ts', from: '../../operator/controllers/index.js', refused: true },
    { file: 'services/dataprep/zz.ts', from: '../../operator/drivers/embedded/index.js', refused: true },
    { file: 'services/dataprep/zz.ts', from: '../../operator/embedded-control-plane.js', refused: true },
    { file: 'services/dataprep/zz.ts', from: '../../operator/api/index.js', refused: false },
    { file: 'services/dataprep/zz.ts', from: '../../operator/ports/index.js', refused: false },
    { file: 'services/dataprep/zz.ts', from: '../../operator/service-control-plane.js', refused: false },
  ],
  'services/lib imports no service and no operator part': [
    { file: 'services/lib/log/zz.ts', from: '../../dataprep/config.js', refused: true },
    { file: 'services/lib/log/zz.ts', from: '../../../operator/api/index.js', refused: true },
  ],
  'controllers never import a driver': [
    { file: 'operator/controllers/zz.ts', from: '../drivers/embedded/index.js', refused: true },
    { file: 'operator/controllers/ingestjob/zz.ts', from: '../../drivers/kubernetes/index.js', refused: true },
    { file: 'operator/controllers/ingestjob/zz.ts', from: '../../config.js', refused: true },
    { file: 'operator/controllers/zz.ts', from: '../ports/index.js', refused: false },
    { file: 'operator/controllers/zz.ts', from: './settings.js', refused: false },
  ],
  'drivers never import each other or a controller': [
    { file: 'operator/drivers/embedded/zz.ts', from: '../kubernetes/index.js', refused: true },
    { file: 'operator/drivers/kubernetes/zz.ts', from: '../embedded/index.js', refused: true },
    { file: 'operator/drivers/kubernetes/zz.ts', from: '../../controllers/index.js', refused: true },
  ],
  'nothing imports bin/': [
    { file: 'operator/zz.ts', from: '../bin/services.js', refused: true },
    { file: 'services/lib/log/zz.ts', from: '../../../bin/services.js', refused: true },
  ],
  'production code never imports test support': [
    { file: 'services/dataprep/zz.ts', from: '../../test/support/media.js', refused: true },
    { file: 'operator/zz.ts', from: './ports/resource-store.contract.js', refused: true },
    { file: 'services/frame-analysis/zz.ts', from: './testing/serve-app.js', refused: true },
    { file: 'services/frame-analysis/zz.test.ts', from: './testing/serve-app.js', refused: false },
  ],
  'multipart bodies are opened only through openMultipart': [
    { file: 'services/dataprep/zz.ts', from: 'busboy', refused: true },
  ],
};

describe('npm run lint keeps the boundaries of the house', () => {
  const all = Object.values(CASES).flat();
  const results = lint(all);

  it.each(Object.keys(CASES))(
    '%s',
    async (rule) => {
      const messages = await results;
      for (const c of CASES[rule]) {
        const seen = messages[all.indexOf(c)].filter((m) => /no-restricted-(paths|imports)/.test(m));
        // The case itself in the failure message: which import, from where, and what the linter said.
        expect({ ...c, seen }).toEqual({ ...c, seen: c.refused ? expect.arrayContaining([expect.any(String)]) : [] });
      }
    },
    120_000,
  );
});
