"""Every write of the tasks app: corpus import and storage, instance generation, characteristic builders."""
