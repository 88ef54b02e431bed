/**
 * PodSecurity admission as k8s.io/pod-security-admission enforces it on pod creation: the checks of the `baseline` and
 * `restricted` levels that the pods Argus makes could trip, with the real check names and messages, in the order the
 * real evaluator reports them (baseline checks, then restricted ones).
 */

/** The namespace label that turns enforcement on, and the one that pins the policy version. */
export const ENFORCE_LABEL = 'pod-security.kubernetes.io/enforce';
const ENFORCE_VERSION_LABEL = 'pod-security.kubernetes.io/enforce-version';

type Level = 'privileged' | 'baseline' | 'restricted';

interface Check {
  level: 'baseline' | 'restricted';
  /** A check replaced by another one at the stricter level (capabilities, seccomp). */
  overriddenAtRestricted?: boolean;
  /** The violation (`name (detail)`), or undefined when the pod passes. */
  evaluate(pod: any): string | undefined;
}

/** `container "a"` or `containers "a", "b"`, as the real messages name them. */
function containersPhrase(names: string[], prefix = ''): string {
  const quoted = names.map((n) => `"${n}"`).join(', ');
  return `${prefix}${names.length === 1 ? 'container' : 'containers'} ${quoted}`;
}

function allContainers(pod: any): any[] {
  const spec = pod.spec ?? {};
  return [...(spec.initContainers ?? []), ...(spec.containers ?? [])];
}

const RESTRICTED_VOLUME_TYPES = new Set([
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'persistentVolumeClaim',
  'projected',
  'secret',
]);

const CHECKS: Check[] = [
  {
    level: 'baseline',
    overriddenAtRestricted: true,
    evaluate(pod) {
      const allowed = new Set([
        'AUDIT_WRITE',
        'CHOWN',
        'DAC_OVERRIDE',
        'FOWNER',
        'FSETID',
        'KILL',
        'MKNOD',
        'NET_BIND_SERVICE',
        'SETFCAP',
        'SETGID',
        'SETPCAP',
        'SETUID',
        'SYS_CHROOT',
      ]);
      const bad = allContainers(pod).filter((c) =>
        (c.securityContext?.capabilities?.add ?? []).some((cap: string) => !allowed.has(cap)),
      );
      if (!bad.length) return undefined;
      return `non-default capabilities (${containersPhrase(bad.map((c) => c.name))} must not include ${bad
        .flatMap((c) => c.securityContext.capabilities.add.filter((cap: string) => !allowed.has(cap)))
        .map((cap: string) => `"${cap}"`)
        .join(', ')} in securityContext.capabilities.add)`;
    },
  },
  {
    level: 'baseline',
    evaluate(pod) {
      const used = ['hostNetwork', 'hostPID', 'hostIPC'].filter((f) => pod.spec?.[f] === true);
      return used.length ? `host namespaces (${used.map((f) => `${f}=true`).join(', ')})` : undefined;
    },
  },
  {
    level: 'baseline',
    evaluate(pod) {
      const names = (pod.spec?.volumes ?? []).filter((v: any) => v.hostPath).map((v: any) => `"${v.name}"`);
      if (!names.length) return undefined;
      return `hostPath volumes (${names.length === 1 ? 'volume' : 'volumes'} ${names.join(', ')})`;
    },
  },
  {
    level: 'baseline',
    evaluate(pod) {
      const bad = allContainers(pod).filter((c) => c.securityContext?.privileged === true);
      return bad.length
        ? `privileged (${containersPhrase(bad.map((c) => c.name))} must not set securityContext.privileged=true)`
        : undefined;
    },
  },
  {
    level: 'baseline',
    overriddenAtRestricted: true,
    evaluate(pod) {
      const unconfined = (sc: any) => sc?.seccompProfile?.type === 'Unconfined';
      const bad = allContainers(pod).filter((c) => unconfined(c.securityContext));
      if (!unconfined(pod.spec?.securityContext) && !bad.length) return undefined;
      const who = unconfined(pod.spec?.securityContext) ? 'pod' : containersPhrase(bad.map((c) => c.name));
      return `seccompProfile (${who} must not set securityContext.seccompProfile.type to "Unconfined")`;
    },
  },
  {
    level: 'restricted',
    evaluate(pod) {
      const bad = allContainers(pod).filter((c) => c.securityContext?.allowPrivilegeEscalation !== false);
      return bad.length
        ? `allowPrivilegeEscalation != false (${containersPhrase(bad.map((c) => c.name))} must set securityContext.allowPrivilegeEscalation=false)`
        : undefined;
    },
  },
  {
    level: 'restricted',
    evaluate(pod) {
      const noDrop = allContainers(pod).filter((c) => !(c.securityContext?.capabilities?.drop ?? []).includes('ALL'));
      const adds = allContainers(pod).filter((c) =>
        (c.securityContext?.capabilities?.add ?? []).some((cap: string) => cap !== 'NET_BIND_SERVICE'),
      );
      const parts = [
        ...(noDrop.length
          ? [`${containersPhrase(noDrop.map((c) => c.name))} must set securityContext.capabilities.drop=["ALL"]`]
          : []),
        ...(adds.length
          ? [
              `${containersPhrase(adds.map((c) => c.name))} must not include ${adds
                .flatMap((c) => c.securityContext.capabilities.add.filter((cap: string) => cap !== 'NET_BIND_SERVICE'))
                .map((cap: string) => `"${cap}"`)
                .join(', ')} in securityContext.capabilities.add`,
            ]
          : []),
      ];
      return parts.length ? `unrestricted capabilities (${parts.join('; ')})` : undefined;
    },
  },
  {
    level: 'restricted',
    evaluate(pod) {
      const bad = (pod.spec?.volumes ?? [])
        .map((v: any) => [v.name, Object.keys(v).find((k) => k !== 'name')] as const)
        .filter(([, type]: readonly [string, string | undefined]) => type && !RESTRICTED_VOLUME_TYPES.has(type));
      if (!bad.length) return undefined;
      return `restricted volume types (${bad
        .map(([name, type]: readonly [string, string]) => `volume "${name}" uses restricted volume type "${type}"`)
        .join(', ')})`;
    },
  },
  {
    level: 'restricted',
    evaluate(pod) {
      const podSays = pod.spec?.securityContext?.runAsNonRoot;
      if (podSays === false) return 'runAsNonRoot != true (pod must not set securityContext.runAsNonRoot=false)';
      const bad = allContainers(pod).filter((c) => {
        const own = c.securityContext?.runAsNonRoot;
        return own === false || (own === undefined && podSays !== true);
      });
      if (!bad.length) return undefined;
      return `runAsNonRoot != true (pod or ${containersPhrase(bad.map((c) => c.name))} must set securityContext.runAsNonRoot=true)`;
    },
  },
  {
    level: 'restricted',
    evaluate(pod) {
      if (pod.spec?.securityContext?.runAsUser === 0) return 'runAsUser=0 (pod must not set runAsUser=0)';
      const bad = allContainers(pod).filter((c) => c.securityContext?.runAsUser === 0);
      return bad.length
        ? `runAsUser=0 (${containersPhrase(bad.map((c) => c.name))} must not set runAsUser=0)`
        : undefined;
    },
  },
  {
    level: 'restricted',
    evaluate(pod) {
      const allowed = (sc: any) => ['RuntimeDefault', 'Localhost'].includes(sc?.seccompProfile?.type);
      const podAllowed = allowed(pod.spec?.securityContext);
      const bad = allContainers(pod).filter((c) =>
        c.securityContext?.seccompProfile ? !allowed(c.securityContext) : !podAllowed,
      );
      if (!bad.length) return undefined;
      return `seccompProfile (pod or ${containersPhrase(bad.map((c) => c.name))} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`;
    },
  },
];

/**
 * The refusal message of PodSecurity admission for `pod` in a namespace with these labels (`pods "x" is forbidden:
 * violates PodSecurity "restricted:latest": …`), or undefined when the pod is admitted.
 */
export function podSecurityViolation(
  pod: any,
  namespaceLabels: Record<string, string> | undefined,
): string | undefined {
  const level = (namespaceLabels?.[ENFORCE_LABEL] ?? 'privileged') as Level;
  if (level !== 'baseline' && level !== 'restricted') return undefined;
  const version = namespaceLabels?.[ENFORCE_VERSION_LABEL] ?? 'latest';
  const applicable = CHECKS.filter((c) => c.level === 'baseline' || level === 'restricted').filter(
    (c) => !(level === 'restricted' && c.overriddenAtRestricted),
  );
  const violations = applicable.map((c) => c.evaluate(pod)).filter((v): v is string => v !== undefined);
  if (!violations.length) return undefined;
  return `pods "${pod.metadata?.name}" is forbidden: violates PodSecurity "${level}:${version}": ${violations.join(', ')}`;
}
