/** The CronTab CRD of upstream's CRD tutorial, with status and scale subresources, printer columns and a schema using the structural features. */
type Json = Record<string, any>;

export function crontabCrd(extra: { scope?: string; versions?: Json[] } = {}): Json {
  return {
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition',
    metadata: { name: 'crontabs.stable.example.com' },
    spec: {
      group: 'stable.example.com', scope: extra.scope ?? 'Namespaced',
      names: { plural: 'crontabs', singular: 'crontab', kind: 'CronTab', shortNames: ['ct'], categories: ['all'] },
      versions: extra.versions ?? [{
        name: 'v1', served: true, storage: true,
        subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } },
        additionalPrinterColumns: [
          { name: 'Spec', type: 'string', jsonPath: '.spec.cronSpec' },
          { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
          { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
        ],
        schema: { openAPIV3Schema: {
          type: 'object',
          properties: {
            spec: {
              type: 'object', required: ['cronSpec'],
              properties: {
                cronSpec: { type: 'string', pattern: '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$' },
                image: { type: 'string', default: 'busybox' },
                replicas: { type: 'integer', minimum: 1, maximum: 10, default: 1 },
                mode: { type: 'string', enum: ['Fast', 'Slow'] },
                port: { 'x-kubernetes-int-or-string': true },
                extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              },
            },
            status: { type: 'object', properties: { replicas: { type: 'integer' }, selector: { type: 'string' } } },
          },
        } },
      }],
    },
  };
}

